// Warm children (docs/runner.md, Warm children), on real Deno processes: after an execution,
// a child for the same version is spawned, loads and authenticates; the next execution of
// that version runs in it (its pid existed before the trigger); unused for deno.warmIdle it
// is killed by its PID, and engine.stop() kills it.
import { readdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Live deno processes started by this process (from /proc): its children, or its
 *  children's when a wrapper (bwrap, prlimit: src/adapters/deno/confine.ts) runs them. */
function denoChildren(): number[] {
  const procs: { pid: number; name: string; state: string; ppid: number }[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const m = /^\d+ \((.*)\) (\S) (\d+)/.exec(readFileSync(`/proc/${p}/stat`, 'utf8'));
      if (m) procs.push({ pid: Number(p), name: m[1]!, state: m[2]!, ppid: Number(m[3]) });
    } catch {
      // gone meanwhile
    }
  }
  const mine = new Set(procs.filter((p) => p.ppid === process.pid).map((p) => p.pid));
  return procs.filter((p) => p.name === 'deno' && p.state !== 'Z' && (p.ppid === process.pid || mine.has(p.ppid))).map((p) => p.pid);
}

async function until<T>(what: string, f: () => T | undefined, boundMs = 60_000): Promise<T> {
  const end = Date.now() + boundMs;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${boundMs} ms`);
    await sleep(50);
  }
}

describe.skipIf(process.platform !== 'linux')('warm run children (SQLite, real Deno; /proc is Linux)', () => {
  it('the next execution of a version runs in the warm child; an idle one is killed; stop kills it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-warm-'));
    dirs.push(dir);
    const file = join(dir, 'pid.ts');
    writeFileSync(file, `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-pid', (w) => { w.trigger(manual()); w.run(async ({ step }) => step.do('pid', () => Deno.pid)); });
`);
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { warmIdle: 60_000 } });
    await engine.start();
    try {
      await engine.workflows.approve('file-pid');
      const first = await engine.result((await engine.trigger('file-pid')).runId, { timeout: '60s' });
      expect(first.status).toBe('succeeded');
      // The warm child for the next execution: a deno process other than the first run's.
      const warm = await until('a warm child', () => denoChildren().find((p) => p !== first.output));
      const second = await engine.result((await engine.trigger('file-pid')).runId, { timeout: '60s' });
      expect(second.output).toBe(warm); // it ran in the child that existed before its trigger
    } finally {
      await engine.stop();
    }
    // stop() killed the warm child spawned after the second run.
    await until('no deno child after stop', () => (denoChildren().length === 0 ? true : undefined), 10_000);

    const idle = await createEngine({ dataDir: join(dir, 'data2'), workflowFiles: [file], log: { level: 'silent' }, deno: { warmIdle: 300 } });
    await idle.start();
    try {
      await idle.workflows.approve('file-pid');
      const run = await idle.result((await idle.trigger('file-pid')).runId, { timeout: '60s' });
      expect(run.status).toBe('succeeded');
      // Spawned after the run (alive at least 300 ms), then killed without an execution.
      const warm = await until('a warm child', () => denoChildren().find((p) => p !== run.output));
      await until('the idle warm child is killed', () => (denoChildren().includes(warm) ? undefined : true), 30_000);
    } finally {
      await idle.stop();
    }
  }, 180_000);
});
