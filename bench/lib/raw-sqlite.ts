// The physical limit: raw better-sqlite3 with the engine's pragmas (WAL, synchronous FULL or
// NORMAL, busy_timeout), no engine code. Two shapes:
//  - rawRep, a minimal two-table layout: a "pair" = INSERT one ~200 B journal row + UPDATE one
//    run's cursor; journal rows appended by rowid and found through a (run, seq) index, runs
//    keyed by an integer (the keys of the engine's schema v3, none of its other indexes or
//    columns); 100 runs in flight, each replaced by a new run after 10 steps;
//  - rawEngineLayoutRep, the engine's own file: its schema (every migration, so every index)
//    and the very statements a 10-step run writes (RUN_WRITES in the SQLite adapter), with
//    the values the engine writes, 100 runs in flight.
// The engine's steps/s is reported against both (bench/lib/citizen.ts): the first says what
// the engine's layout costs, the second how close the engine gets to SQLite on that layout.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openDatabase, RUN_WRITES } from '../../src/adapters/sqlite/store.ts';
import { STEP_RESULT } from './workflows.ts';
import { nowMs } from './stats.ts';

const IN_FLIGHT = 100;
const STEPS = 10;
const RESULT = JSON.stringify(STEP_RESULT);

export interface RawRep { txPerS: number; pairsPerS: number; txs: number }

export function sqliteVersion(): string {
  const db = new Database(':memory:');
  try {
    return (db.prepare('select sqlite_version() AS v').get() as { v: string }).v;
  } finally {
    db.close();
  }
}

/** One repetition: as many transactions of `batch` pairs as fit in `seconds`. */
export function rawRep(dir: string, sync: 'FULL' | 'NORMAL', batch: number, seconds: number, warmupTx: number): RawRep {
  const db = new Database(join(dir, `raw-${sync}-${batch}-${Math.random().toString(36).slice(2)}.db`));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${sync}`);
    db.pragma('busy_timeout = 5000');
    db.exec(`CREATE TABLE runs (seq INTEGER PRIMARY KEY, status TEXT NOT NULL, cursor INTEGER NOT NULL, updated_at INTEGER NOT NULL);
             CREATE TABLE journal (id INTEGER PRIMARY KEY, run_seq INTEGER NOT NULL, seq INTEGER NOT NULL, step_name TEXT NOT NULL,
                                   status TEXT NOT NULL, result_json TEXT);
             CREATE UNIQUE INDEX journal_run ON journal (run_seq, seq);`);
    const insR = db.prepare(`INSERT INTO runs VALUES (?, 'running', 0, 0)`);
    const insJ = db.prepare('INSERT INTO journal (run_seq, seq, step_name, status, result_json) VALUES (?, ?, ?, ?, ?)');
    const updR = db.prepare('UPDATE runs SET cursor = ?, updated_at = ? WHERE seq = ?');
    let nextRun = 0;
    const slots = Array.from({ length: IN_FLIGHT }, () => ({ run: ++nextRun, cursor: 0 }));
    db.transaction(() => { for (const s of slots) insR.run(s.run); })();
    let k = 0;
    const tx = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) {
        const s = slots[k++ % IN_FLIGHT]!;
        if (s.cursor === STEPS) {
          s.run = ++nextRun;
          s.cursor = 0;
          insR.run(s.run); // a new run every 10 pairs, as in the engine workload
        }
        const seq = ++s.cursor;
        insJ.run(s.run, seq, `step-${seq}`, 'succeeded', RESULT);
        updR.run(seq, k, s.run);
      }
    });
    for (let i = 0; i < warmupTx; i++) tx(batch);
    const { txs, s } = repeatFor(seconds, () => tx(batch));
    return { txPerS: txs / s, pairsPerS: (txs * batch) / s, txs };
  } finally {
    db.close();
  }
}

export interface LayoutRep { stepsPerS: number; writesPerS: number; txs: number }

/** One repetition on the engine's own file: transactions of `batch` writes, each write the
 *  next one of a run in flight (insert, 'running', ten steps, finish), as the engine's group
 *  commit carries them at 100 concurrent runs (~100 writes per transaction). Run ids are
 *  random UUIDs, as the engine's (node's randomUUID: ~0.1 us per run of 13 writes). */
export function rawEngineLayoutRep(dir: string, batch: number, seconds: number, warmupTx: number): LayoutRep {
  const db = openDatabase(join(dir, `layout-${Math.random().toString(36).slice(2)}`), 'full');
  try {
    const insertRun = db.prepare(RUN_WRITES.insertRun);
    const setStatus = db.prepare(RUN_WRITES.setStatus);
    const upsertStep = db.prepare(RUN_WRITES.upsertStep);
    const finishRun = db.prepare(RUN_WRITES.finishRun);
    const names = Array.from({ length: STEPS }, (_, i) => `s${i}`);
    let created = 0;
    let steps = 0;
    let k = 0;
    // op: 0 insert, 1 'running', 2..11 the steps, 12 finish.
    const slots = Array.from({ length: IN_FLIGHT }, () => ({ id: '', op: 0 }));
    const tx = db.transaction((n: number, now: number) => {
      for (let i = 0; i < n; i++) {
        const s = slots[k++ % IN_FLIGHT]!;
        if (s.op === 0) {
          s.id = randomUUID();
          insertRun.run(s.id, 'bench-ten-steps', 'v', '{}', now, now, ++created);
        } else if (s.op === 1) setStatus.run('running', null, now, s.id);
        else if (s.op <= STEPS + 1) {
          const seq = s.op - 2;
          upsertStep.run(s.id, s.id, seq, names[seq], 'do', 'succeeded', 1, RESULT, null, now, now, null, null, seq + 1, null);
          steps++;
        } else {
          finishRun.run('succeeded', '{"steps":10}', null, now, s.id);
          s.op = -1;
        }
        s.op++;
      }
    });
    for (let i = 0; i < warmupTx; i++) tx(batch, Date.now());
    steps = 0;
    const { txs, s } = repeatFor(seconds, () => tx(batch, Date.now()));
    return { stepsPerS: steps / s, writesPerS: (txs * batch) / s, txs };
  } finally {
    db.close();
  }
}

/** Runs `tx` back to back for `seconds`: how many ran, and the seconds they took. */
function repeatFor(seconds: number, tx: () => void): { txs: number; s: number } {
  let txs = 0;
  const t0 = nowMs();
  const end = t0 + seconds * 1000;
  let t = t0;
  while (t < end) {
    tx();
    txs++;
    t = nowMs();
  }
  return { txs, s: (t - t0) / 1000 };
}
