// Durability of workflow-file runs (issue 11), on real Deno children: a child SIGKILLed in
// the middle of a step resumes from its journal in a new child, with the same idempotency
// key; a run that sleeps while its file is edited resumes the code it started with (its
// snapshot), while a new run executes the edited file.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-resume-'));
  dirs.push(d);
  return d;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Each step body leaves a file `<step>-<pid>.txt` holding its idempotency key; the second
 *  step's body, the first time it runs, then waits (its child is killed there). */
const killable = `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-killable', { permissions: { read: ['./out'], write: ['./out'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const out = (input as { out: string }).out;
    const mark = (name: string, key: string) => Deno.writeTextFile(out + '/' + name + '-' + Deno.pid + '.txt', key);
    const first = await step.do('first', async ({ idempotencyKey }) => (await mark('first', idempotencyKey), 1));
    const second = await step.do('second', async ({ idempotencyKey }) => {
      const before = [...Deno.readDirSync(out)].some((e) => e.name.startsWith('second-'));
      await mark('second', idempotencyKey);
      if (!before) await new Promise((r) => setTimeout(r, 600_000)); // killed here
      return { key: idempotencyKey, pid: Deno.pid };
    });
    return { first, second };
  });
});
`;

describe.each(['sqlite', 'restate'] as const)('resume and snapshots of workflow-file runs (%s, real Deno child)', (backend) => {
  it('a child SIGKILLed mid-step resumes from its journal in a new child with the same idempotency key', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    mkdirSync(out);
    writeFileSync(join(dir, 'killable.ts'), killable);
    const engine = await createEngine({ backend, dataDir: join(dir, 'data'), workflowFiles: [join(dir, 'killable.ts')], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('file-killable');
      const { runId } = await engine.trigger('file-killable', { out });
      // The second step's body has begun in the first child: kill that child by its pid.
      let marks: string[] = [];
      while (!(marks = readdirSync(out)).some((f) => f.startsWith('second-'))) await sleep(20);
      const firstPid = Number(/second-(\d+)\.txt/.exec(marks.find((f) => f.startsWith('second-'))!)![1]);
      // (The executor reports the lost child once on stderr: "could not be advanced, will retry".)
      process.kill(firstPid, 'SIGKILL');
      const view = await engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('succeeded');
      const result = view.output as { first: number; second: { key: string; pid: number } };
      expect(result.second.pid).not.toBe(firstPid); // a new child finished it
      expect(result.second.key).toBe(`${runId}/second`);
      const files = readdirSync(out).sort();
      // The first step ran once (the new child replayed it from the journal), the second twice,
      // with the same idempotency key each time.
      expect(files.filter((f) => f.startsWith('first-'))).toHaveLength(1);
      const seconds = files.filter((f) => f.startsWith('second-'));
      expect(seconds).toHaveLength(2);
      expect(seconds.map((f) => readFileSync(join(out, f), 'utf8'))).toEqual([`${runId}/second`, `${runId}/second`]);
      expect(view.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([['first', 'succeeded', 1], ['second', 'succeeded', 1]]);
    } finally {
      await engine.stop();
    }
  }, 120_000);

  it('editing the file while a run sleeps does not change what that run executes; a new run executes the edit', async () => {
    const dir = tempDir();
    const file = join(dir, 'edited.ts');
    const source = (tag: string) => `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-edited', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => '${tag}');
    await step.sleep('pause', (input as { ms: number }).ms);
    const b = await step.do('b', () => '${tag}');
    return [a, b];
  });
});
`;
    writeFileSync(file, source('v1'));
    const engine = await createEngine({ backend, dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('file-edited');
      const old = await engine.trigger('file-edited', { ms: 3_000 });
      while ((await engine.runs.get(old.runId)).status !== 'sleeping') await sleep(20);
      writeFileSync(file, source('v2')); // same declaration: no new approval needed
      const edited = await engine.trigger('file-edited', { ms: 0 });
      const oldView = await engine.result(old.runId, { timeout: '60s' });
      const newView = await engine.result(edited.runId, { timeout: '60s' });
      expect(oldView.output).toEqual(['v1', 'v1']);
      expect(newView.output).toEqual(['v2', 'v2']);
      expect(newView.version).not.toBe(oldView.version);
      expect(existsSync(join(dir, 'data', 'runner', 'snapshots', oldView.version))).toBe(true);
    } finally {
      await engine.stop();
    }
  }, 120_000);
});
