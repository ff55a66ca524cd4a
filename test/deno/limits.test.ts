// Resource limits and crashes of workflow-file children (issue 36 #6, #7): a memory cap per
// child, a bound on each file it writes, a time limit for describing, and a child that crashes is a failure with its reason
// counted against the retry policy (never retried forever). Real Deno children, SQLite.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function fileIn(name: string, body: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-limits-'));
  dirs.push(dir);
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, `import { workflow, manual } from '@tranquil/sdk';\n${body}`);
  return { dir, file };
}

describe('limits of workflow-file children (SQLite, real Deno child)', () => {
  it('a file that spins at top level when described is reported as broken, with the reason; start does not hang', async () => {
    const { dir, file } = fileIn('spin', `for (;;) {}\nexport default workflow('spin', (w) => { w.trigger(manual()); w.run(() => 1); });\n`);
    const t0 = Date.now();
    const err = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { describeTimeout: 1_000 } }).then(() => undefined, (e: Error) => e);
    expect(err?.message).toBe(`workflow file ${file}: could not be described: its top-level code did not finish within 1000ms and was killed (config deno.describeTimeout)`);
    expect(Date.now() - t0).toBeLessThan(30_000);
  }, 60_000);

  it('a trigger after the file changed to spin at top level rejects with the reason instead of hanging', async () => {
    const { dir, file } = fileIn('turns', `export default workflow('turns', (w) => { w.trigger(manual()); w.run(() => 1); });\n`);
    // Long enough for the first, benign describe on a loaded machine.
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { describeTimeout: 10_000 } });
    await engine.start();
    try {
      writeFileSync(file, `import { workflow, manual } from '@tranquil/sdk';\nfor (;;) {}\nexport default workflow('turns', (w) => { w.trigger(manual()); w.run(() => 2); });\n`);
      // A changed version is described again on trigger (deno-runner.ts describe).
      await expect(engine.trigger('turns')).rejects.toThrow(`workflow file ${file}: could not be described: its top-level code did not finish within 10000ms and was killed (config deno.describeTimeout)`);
    } finally {
      await engine.stop();
    }
  }, 60_000);

  it('a step holding more than the memory cap fails its attempts with a clear error; the retry policy applies', async () => {
    const { dir, file } = fileIn('hog', `export default workflow('hog', (w) => {
  w.trigger(manual());
  w.run(({ step }) => step.do('hog', { retries: { limit: 2, delay: 10 } }, async () => {
    const keep: Uint8Array[] = [];
    for (let i = 0; i < 64; i++) { keep.push(new Uint8Array(64 * 1024 * 1024).fill(1)); await new Promise((r) => setTimeout(r, 5)); }
    return keep.length;
  }));
});\n`);
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { memory: 128 } });
    await engine.start();
    try {
      await engine.workflows.approve('hog');
      const done = await engine.result((await engine.trigger('hog')).runId, { timeout: '90s' });
      expect(done.status).toBe('failed');
      expect(done.steps[0], JSON.stringify(done.error)).toMatchObject({ name: 'hog', status: 'failed', attempts: 2 });
      expect(done.error?.message).toMatch(/Array buffer allocation failed|exceeded its memory cap of 128 MiB/);
    } finally {
      await engine.stop();
    }
  }, 120_000);

  it('a file written past deno.maxFileBytes (RLIMIT_FSIZE) fails the attempt with the reason; a file within it is written', async () => {
    const { dir, file } = fileIn('filler', `export default workflow('filler', { permissions: { read: ['./out'], write: ['./out'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('fill', { retries: { limit: 2, delay: 10 } }, () => {
    Deno.writeFileSync(input.path, new Uint8Array(input.bytes));
    return Deno.statSync(input.path).size;
  }));
});\n`);
    mkdirSync(join(dir, 'out'));
    const bound = 8 * 1024 * 1024;
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { maxFileBytes: bound } });
    await engine.start();
    try {
      await engine.workflows.approve('filler');
      const within = await engine.result((await engine.trigger('filler', { path: join(dir, 'out', 'small'), bytes: bound / 2 })).runId, { timeout: '60s' });
      expect(within, JSON.stringify(within.error)).toMatchObject({ status: 'succeeded', output: bound / 2 });
      const past = await engine.result((await engine.trigger('filler', { path: join(dir, 'out', 'big'), bytes: 2 * bound })).runId, { timeout: '90s' });
      expect(past.status).toBe('failed');
      expect(past.steps[0]).toMatchObject({ name: 'fill', status: 'failed', attempts: 2 });
      expect(past.error?.message).toMatch(new RegExp(`^step 'fill': the run child of \\S+ \\(pid \\d+\\) wrote a file past its bound of ${bound} bytes \\(config deno.maxFileBytes\\) and was ended \\(signal SIGXFSZ\\)$`));
      expect(statSync(join(dir, 'out', 'big')).size).toBeLessThanOrEqual(bound);
    } finally {
      await engine.stop();
    }
  }, 120_000);

  // The total bound (issue 36: "a bound on the child's disk use"): many files, each under
  // deno.maxFileBytes, add up past deno.maxWriteBytes; the run's next attempt starts with
  // what the first one wrote already counted.
  it('a run writing many files, each within maxFileBytes, past deno.maxWriteBytes in total is stopped with the reason', async () => {
    const { dir, file } = fileIn('spray', `export default workflow('spray', { permissions: { write: ['./out'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('spray', { retries: { limit: 2, delay: 10 } }, async ({ attempt }) => {
    for (let i = 0; i < input.files; i++) {
      Deno.writeFileSync(input.dir + '/' + attempt + '-' + i, new Uint8Array(2 * 1024 * 1024).fill(7));
      await new Promise((r) => setTimeout(r, 20));
    }
    return input.files;
  }));
});\n`);
    mkdirSync(join(dir, 'out'));
    mkdirSync(join(dir, 'out', 'a'));
    mkdirSync(join(dir, 'out', 'b'));
    const total = 24 * 1024 * 1024;
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { maxFileBytes: 4 * 1024 * 1024, maxWriteBytes: total } });
    await engine.start();
    try {
      await engine.workflows.approve('spray');
      const within = await engine.result((await engine.trigger('spray', { dir: join(dir, 'out', 'a'), files: 4 })).runId, { timeout: '60s' });
      expect(within, JSON.stringify(within.error)).toMatchObject({ status: 'succeeded', output: 4 });
      const past = await engine.result((await engine.trigger('spray', { dir: join(dir, 'out', 'b'), files: 64 })).runId, { timeout: '90s' });
      expect(past.status, JSON.stringify(past.error)).toBe('failed');
      expect(past.steps[0], JSON.stringify(past.error)).toMatchObject({ name: 'spray', status: 'failed', attempts: 2 });
      expect(past.error?.message).toMatch(new RegExp(`^step 'spray': the run child of \\S+ \\(pid \\d+\\) wrote \\d+ bytes to disk \\(\\d+ in this run\\), past its run's bound of ${total} bytes in total \\(config deno.maxWriteBytes\\), and was ended$`));
      const written = readdirSync(join(dir, 'out', 'b'));
      // Stopped well before the 64 files of the first attempt (the bound is read every 200 ms).
      expect(written.filter((f) => f.startsWith('1-')).length).toBeLessThan(40);
      expect(written.filter((f) => f.startsWith('1-')).length).toBeGreaterThanOrEqual(8);
      // The second attempt had the first one's bytes counted: it was stopped at once.
      expect(written.filter((f) => f.startsWith('2-')).length).toBeLessThan(8);
    } finally {
      await engine.stop();
    }
  }, 150_000);

  it('a child that crashes in a step (exit 70) fails that attempt with the reason; at load (exit 70 or 0), the run fails at once', async () => {
    const { dir, file } = fileIn('crash', `const loading = (() => { try { return Deno.env.get('CRASH_AT_LOAD'); } catch { return undefined; } })();
export default workflow('crash', { permissions: { env: ['CRASH_AT_LOAD'] } }, (w) => {
  w.trigger(manual());
  w.run(({ step }) => step.do('unstable', { retries: { limit: 3, delay: 10 } }, () => Deno.exit(70)));
});\nif (loading && Deno.args.length > 0) Deno.exit(Number(loading));\n`);
    // No warm child: the env read at spawn decides where this file crashes.
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { warmIdle: 0 } });
    await engine.start();
    try {
      await engine.workflows.approve('crash');
      const done = await engine.result((await engine.trigger('crash')).runId, { timeout: '90s' });
      expect(done.status).toBe('failed');
      expect(done.steps[0]).toMatchObject({ name: 'unstable', status: 'failed', attempts: 3 });
      expect(done.error?.message).toMatch(/^step 'unstable': the run child of \S+ \(pid \d+\) crashed \(exit 70\)/);
      process.env.CRASH_AT_LOAD = '70';
      const early = await engine.result((await engine.trigger('crash')).runId, { timeout: '60s' });
      expect(early.status).toBe('failed');
      expect(early.error?.message).toMatch(/crashed \(exit 70\).*\(before it connected: while loading the workflow file\)$/);
      // Exit 0 before any outcome is a crash too: it was resumed in a new child forever.
      process.env.CRASH_AT_LOAD = '0';
      const quiet = await engine.result((await engine.trigger('crash')).runId, { timeout: '60s' });
      expect(quiet.status).toBe('failed');
      expect(quiet.error?.message).toMatch(/ended \(exit 0\) before sending its outcome.*\(before it connected: while loading the workflow file\)$/);
    } finally {
      delete process.env.CRASH_AT_LOAD;
      await engine.stop();
    }
  }, 120_000);
});
