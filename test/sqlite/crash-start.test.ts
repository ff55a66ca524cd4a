// Start after a crash without the whole-file check (src/adapters/sqlite/verified-mark.ts): a
// file exactly as its engine last checkpointed it is vouched for by tranquil.db.verified; a
// file changed by anyone else (here: damaged after the crash, or touched while the engine ran)
// gets the full check, and a damaged one is refused untouched, as after a clean stop.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEngine, StorageError } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { CommitQueue } from '../../src/adapters/sqlite/commit-queue.ts';
import { openDatabase, SqliteStore } from '../../src/adapters/sqlite/store.ts';
import { vouched } from '../../src/adapters/sqlite/verified-mark.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-crash-start-'));
  dirs.push(d);
  return d;
};
const steady = workflow('steady', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('a', () => input));
});

/** An engine process that runs `runs` runs of ~`size` bytes of input, then dies by SIGKILL
 *  once no checkpoint is running. Checkpoints run on a worker thread, so the last one may
 *  still be copying when the last result is answered; killed then, the file no longer matches
 *  the mark and the next start rightly runs the full check (test/sqlite/checkpoint-worker.
 *  test.ts). So the child first waits until the mark has vouched for the file for 300 ms in a
 *  row: an idle engine starts no new checkpoint (they follow commits), and the one pass that
 *  may follow a checkpoint starts as soon as that one ends and changes the file within ms. */
function crashAfterRuns(dataDir: string, runs: number, size: number): void {
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `
    import { createEngine } from '@tranquil/engine';
    import { manual, workflow } from '@tranquil/sdk';
    import { vouched } from './src/adapters/sqlite/verified-mark.ts';
    const steady = workflow('steady', (w) => { w.trigger(manual()); w.run(async ({ input, step }) => step.do('a', () => input)); });
    const e = await createEngine({ dataDir: ${JSON.stringify(dataDir)}, workflows: [steady] });
    await e.start();
    const ids = await Promise.all(Array.from({ length: ${runs} }, async (_, i) => (await e.trigger('steady', { i, pad: 'x'.repeat(${size}) })).runId));
    await Promise.all(ids.map((id) => e.result(id, { timeout: '60s' })));
    const file = ${JSON.stringify(join(dataDir, 'tranquil.db'))};
    for (let i = 0, steady = 0; i < 3000 && steady < 30; i++, steady = vouched(file) ? steady + 1 : 0) await new Promise((r) => setTimeout(r, 10));
    process.kill(process.pid, 'SIGKILL');`], { cwd: process.cwd(), encoding: 'utf8', timeout: 120_000 });
  expect(child.signal, child.stderr).toBe('SIGKILL');
}

it('after a crash, a file still as its engine left it is vouched for and starts with its runs', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  crashAfterRuns(dir, 300, 20_000); // ~6 MB through the -wal: at least one checkpoint by the owner
  expect(existsSync(`${file}.clean`)).toBe(false);
  expect(vouched(file)).toBe(true);
  const e = await createEngine({ dataDir: dir, workflows: [steady] });
  await e.start();
  const runs = await e.runs.list({ limit: 1000 });
  expect(runs.filter((r) => r.status === 'succeeded')).toHaveLength(300);
  await e.stop();
}, 120_000);

it('a file damaged after a crash is not vouched for: the full check refuses it, untouched', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  crashAfterRuns(dir, 300, 20_000); // at least one checkpoint: most pages in the main file
  expect(vouched(file)).toBe(true);
  truncateSync(file, Math.floor(statSync(file).size / 2));
  expect(vouched(file)).toBe(false);
  const before = readFileSync(file);
  const err = await (await createEngine({ dataDir: dir, workflows: [steady] })).start().catch((x: unknown) => x);
  expect(err).toBeInstanceOf(StorageError);
  expect((err as Error).message).toMatch(/damaged.*left untouched/);
  expect(Buffer.compare(readFileSync(file), before)).toBe(0);
}, 120_000);

it('a file changed by someone else while the engine ran loses its mark at the next checkpoint', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const store = new SqliteStore(openDatabase(dir, 'full'));
  const q = new CommitQueue(store);
  expect(vouched(file)).toBe(true);
  chmodSync(file, 0o640); // moves ctime, as any outside write would
  expect(vouched(file)).toBe(false);
  const pad = 'y'.repeat(20_000);
  for (let i = 0; i < 300 && !q.checkpoints!.stats.checkpoints; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => q.enqueue(() => store.insertRun({ runId: `r${i + j}`, workflow: 'w', version: 'v', input: pad, now: 1 }))));
  }
  expect(q.checkpoints!.stats.checkpoints).toBeGreaterThan(0);
  expect(existsSync(`${file}.verified`)).toBe(false); // and never written again by this engine
  expect(statSync(file).size).toBeGreaterThan(0);
  store.close();
});
