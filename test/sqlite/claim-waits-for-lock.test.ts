// A group commit whose first statement reads (a timer claim: what is due, then the claim) in
// a DEFERRED transaction fails at once with SQLITE_BUSY when another connection holds the
// write lock: SQLite calls no busy handler for a read that upgrades to a write. So a brief lock
// from another connection (a CLI process, the checkpoint worker's -wal restart) failed the
// whole batch: every write in it, a user's trigger among them. Group commits run IMMEDIATE:
// the batch waits for the lock (busy_timeout) and commits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { afterEach, expect, it } from 'vitest';
import { CommitQueue } from '../../src/adapters/sqlite/commit-queue.ts';
import { DB_FILE, openDatabase, SqliteStore } from '../../src/adapters/sqlite/store.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Another connection, on its own thread, takes the write lock and keeps it `ms`. Returns once
 *  it holds it (waiting on shared memory, so no turn of this thread's event loop is needed). */
function holdWriteLock(file: string, ms: number): Promise<number> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const w = new Worker(`
    const { workerData: { driver, file, flag, ms } } = require('node:worker_threads');
    const db = new (require(driver))(file);
    db.exec('BEGIN IMMEDIATE');
    Atomics.store(flag, 0, 1); Atomics.notify(flag, 0);
    Atomics.wait(flag, 0, 1, ms);
    db.exec('ROLLBACK');
    db.close();
  `, { eval: true, workerData: { driver, file, flag, ms } });
  Atomics.wait(flag, 0, 0, 10_000);
  expect(Atomics.load(flag, 0)).toBe(1);
  return new Promise((resolve, reject) => { w.on('exit', resolve); w.on('error', reject); });
}

it('a batch that reads before it writes, queued while another connection briefly holds the write lock, waits and commits', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-cq-lock-'));
  dirs.push(dir);
  const s = new SqliteStore(openDatabase(dir, 'full'));
  const q = new CommitQueue(s);
  await q.enqueue(() => s.insertRun({ runId: 'a', workflow: 'w', version: 'v', input: null, now: 1 }));

  const released = holdWriteLock(join(dir, DB_FILE), 200);
  // Read first, then write: the shape of a timer claim.
  const claim = q.enqueue(() => {
    const seen = s.listRunRows({ limit: 10 }).length;
    s.insertRun({ runId: 'b', workflow: 'w', version: 'v', input: null, now: 2 });
    return seen;
  });
  const trigger = q.enqueue(() => s.insertRun({ runId: 'c', workflow: 'w', version: 'v', input: null, now: 3 }));
  expect(await claim).toBe(1);
  expect(await trigger).toBe(true);
  await released;
  expect(s.listRunRows({ limit: 10 }).map((r) => r.run_id).sort()).toEqual(['a', 'b', 'c']);
  await q.close();
  s.close();
});
