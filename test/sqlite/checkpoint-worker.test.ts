// WAL checkpoints off the host's event loop (src/adapters/sqlite/checkpoint-thread.ts): the
// owner's checkpoints run on a worker thread with its own connection while the main thread
// keeps committing; the -wal still restarts; a clean close ends the worker first so the
// owner's close is the last (clean mark); and a SIGKILL while the worker is mid-checkpoint
// leaves no mark that vouches for the changed file: the next start runs the full check and
// has every acknowledged run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEngine } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { CommitQueue } from '../../src/adapters/sqlite/commit-queue.ts';
import { openDatabase, SqliteStore } from '../../src/adapters/sqlite/store.ts';
import { Checkpoints, vouched } from '../../src/adapters/sqlite/verified-mark.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-ckpt-worker-'));
  dirs.push(d);
  return d;
};

it('checkpoints run on the worker while the main thread keeps committing; the -wal restarts; close ends the worker first', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const store = new SqliteStore(openDatabase(dir, 'full'));
  const q = new CommitQueue(store);
  const ck = q.checkpoints!;
  const version = store.db.pragma('user_version', { simple: true });
  expect(ck.worker).toBeDefined();
  expect(ck.worker!.stats.started).toBe(0); // lazily: no thread before the first checkpoint
  const pad = 'z'.repeat(20_000);
  let committedWhileCheckpointing = 0;
  for (let i = 0; i < 2000; i += 10) {
    const busy = ck.worker!.busy;
    await Promise.all(Array.from({ length: 10 }, (_, j) => q.enqueue(() => store.insertRun({ runId: `r${i + j}`, workflow: 'w', version: 'v', input: pad, now: 1 }))));
    if (busy && ck.worker!.busy) committedWhileCheckpointing++;
  }
  await ck.idle();
  // ~40 MB went through the -wal: several checkpoints, every one on the worker thread.
  expect(ck.stats.done).toBeGreaterThanOrEqual(4);
  expect(ck.stats.inline).toBe(0);
  expect(ck.worker!.stats.started).toBe(1);
  expect(committedWhileCheckpointing).toBeGreaterThan(0);
  // The -wal restarted from its start (a checkpoint racing commits alone would never let it).
  expect(statSync(`${file}-wal`).size).toBeLessThan(20 * 1024 * 1024);
  // The worker restarted the -wal (checkpoint-worker.ts restart()); user_version, which it
  // rewrote to do so, is unchanged.
  expect(ck.stats.restarts).toBeGreaterThanOrEqual(1);
  expect(store.db.pragma('user_version', { simple: true })).toBe(version);
  expect(store.db.pragma('quick_check', { simple: true })).toBe('ok');
  expect(statSync(file).size).toBeGreaterThan(30 * 1024 * 1024);
  expect(vouched(file)).toBe(true);
  await q.close(); // the worker's connection closed: the owner's close below is the last
  store.close({ clean: true });
  expect(existsSync(`${file}-wal`)).toBe(false);
  expect(existsSync(`${file}.clean`)).toBe(true);
}, 120_000);

it('the worker makes the first write after its last pass: the -wal restarts before the main thread commits again', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const store = new SqliteStore(openDatabase(dir, 'full'));
  const q = new CommitQueue(store);
  const ck = q.checkpoints!;
  const pad = 'z'.repeat(20_000);
  // mxFrame (byte 16 of the wal-index header) when the last pass releases the held commits,
  // before any of them runs: nothing is enqueued while a pass holds them.
  let atRelease: number | undefined;
  let inserted = 0;
  for (let i = 0; i < 5000 && atRelease === undefined; i += 10, inserted += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => q.enqueue(() => store.insertRun({ runId: `r${i + j}`, workflow: 'w', version: 'v', input: pad, now: 1 }))));
    const released = new Promise<void>((resolve) => {
      if (!ck.wait(() => ((atRelease = readFileSync(`${file}-shm`).readUInt32LE(16)), resolve()))) resolve();
    });
    await released;
  }
  await ck.idle();
  // One frame: the worker's own write (page 1). The main thread's next commit appends to a
  // restarted -wal, so it writes and syncs no new header itself.
  expect(atRelease).toBe(1);
  expect(ck.stats.restarts).toBeGreaterThanOrEqual(1);
  expect(store.db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: inserted });
  expect(store.db.pragma('quick_check', { simple: true })).toBe('ok');
  await q.close();
  store.close({ clean: true });
}, 120_000);

it('a SIGKILL while the worker is mid-checkpoint leaves no mark for the changed file: the full check runs and every acknowledged run is there', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const acked = join(dir, 'acked.txt');
  // The child triggers runs until its worker holds after a checkpoint changed the file (the
  // env fault point: before the new mark is written), then dies by SIGKILL there.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `
    import { appendFileSync, existsSync } from 'node:fs';
    import { createEngine } from '@tranquil/engine';
    import { manual, workflow } from '@tranquil/sdk';
    import { vouched } from './src/adapters/sqlite/verified-mark.ts';
    const steady = workflow('steady', (w) => { w.trigger(manual()); w.run(async ({ input, step }) => step.do('a', () => input)); });
    const e = await createEngine({ dataDir: ${JSON.stringify(dir)}, workflows: [steady] });
    await e.start();
    const file = ${JSON.stringify(file)};
    const held = () => existsSync(file + '.verified') && !vouched(file);
    for (let i = 0; i < 2000 && !held(); i += 20) {
      await Promise.all(Array.from({ length: 20 }, async (_, j) => {
        const { runId } = await e.trigger('steady', { i: i + j, pad: 'x'.repeat(20000) });
        await e.result(runId, { timeout: '60s' });
        appendFileSync(${JSON.stringify(acked)}, runId + '\\n');
      }));
    }
    for (let i = 0; i < 1000 && !held(); i++) await new Promise((r) => setTimeout(r, 10));
    process.kill(process.pid, 'SIGKILL');`], { cwd: process.cwd(), encoding: 'utf8', timeout: 120_000, env: { ...process.env, TRANQUIL_FAULT_CHECKPOINT: 'hold-before-mark' } });
  expect(child.signal, child.stderr).toBe('SIGKILL');
  // The checkpoint changed the file and its mark was never renewed: nothing vouches for it.
  expect(existsSync(`${file}.clean`)).toBe(false);
  expect(existsSync(`${file}.verified`)).toBe(true);
  expect(vouched(file)).toBe(false); // so openDatabase runs the whole-file quick_check
  const ids = readFileSync(acked, 'utf8').trim().split('\n');
  expect(ids.length).toBeGreaterThan(50);
  const steady = workflow('steady', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => step.do('a', () => input));
  });
  const e = await createEngine({ dataDir: dir, workflows: [steady] });
  await e.start();
  for (const id of ids) expect((await e.runs.get(id))?.status, id).toBe('succeeded');
  await e.stop();
}, 120_000);

/** ~5 MB of -wal written straight on the connection (wal_autocheckpoint is 0: all of it waits). */
function fillWal(store: SqliteStore, from: number): void {
  const pad = 'q'.repeat(20_000);
  store.transaction(() => {
    for (let i = from; i < from + 250; i++) store.insertRun({ runId: `f${i}`, workflow: 'w', version: 'v', input: pad, now: 1 });
  });
}

it('a worker that cannot start (better-sqlite3 does not load in it) falls back to checkpoints on the main thread', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const store = new SqliteStore(openDatabase(dir, 'full'));
  const ck = Checkpoints.for(store.db, { thread: { driver: join(dir, 'no-such-driver.js') } })!;
  const logged: unknown[] = [];
  const error = console.error;
  console.error = (...a: unknown[]) => void logged.push(a.join(' '));
  try {
    fillWal(store, 0);
    ck.afterCommit();
    await ck.idle();
  } finally {
    console.error = error;
  }
  expect(ck.worker).toBeUndefined();
  expect(ck.stats.inline).toBe(1);
  expect(ck.stats.done).toBe(1);
  expect(String(logged[0])).toMatch(/checkpoint worker could not start.*main thread/);
  expect(vouched(file)).toBe(true);
  fillWal(store, 1000);
  ck.afterCommit(); // synchronous now: done when it returns
  expect(ck.stats.done).toBe(2);
  expect(vouched(file)).toBe(true);
  await ck.close();
  store.close();
});

it('the worker starts at the first checkpoint and ends once idle; the next checkpoint starts a new one', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const store = new SqliteStore(openDatabase(dir, 'full'));
  const ck = Checkpoints.for(store.db, { thread: { idleMs: 50 } })!;
  const thread = ck.worker!;
  expect(thread.alive).toBe(false);
  fillWal(store, 0);
  ck.afterCommit();
  expect(thread.alive).toBe(true);
  await ck.idle();
  for (let i = 0; i < 500 && thread.alive; i++) await new Promise((r) => setTimeout(r, 10));
  expect(thread.alive).toBe(false);
  // At once, while the retired worker may still be ending: its end must not be taken for the
  // new worker's (that answered the new checkpoint "unavailable", and every later checkpoint
  // then ran on the main thread for good).
  fillWal(store, 1000);
  ck.afterCommit();
  await ck.idle();
  expect(thread.stats.started).toBe(2);
  expect(ck.worker).toBe(thread);
  expect(ck.stats.done).toBeGreaterThanOrEqual(2);
  expect(vouched(file)).toBe(true);
  await ck.close();
  store.close();
});

/** Nice values of this process's threads (Linux: /proc/self/task/<tid>/stat, field 19). */
const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
const threadNices = () =>
  readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      return [niceOf(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8'))];
    } catch {
      return []; // a thread that ended meanwhile
    }
  });

it.runIf(process.platform === 'linux')('the worker runs below the host: its own thread at nice 10, the host thread unchanged', async () => {
  const dir = newDir();
  const store = new SqliteStore(openDatabase(dir, 'full'));
  const ck = Checkpoints.for(store.db, { thread: { idleMs: 60_000 } })!;
  const mine = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'));
  const before = threadNices().filter((n) => n === 10).length;
  fillWal(store, 0);
  ck.afterCommit();
  await ck.idle();
  expect(ck.worker!.alive).toBe(true);
  expect(ck.stats.done).toBeGreaterThanOrEqual(1);
  expect(threadNices().filter((n) => n === 10).length).toBe(before + 1);
  expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(mine);
  await ck.close();
  store.close();
});
