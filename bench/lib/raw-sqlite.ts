// The physical limit: raw better-sqlite3 with the engine's pragmas (WAL, synchronous FULL or
// NORMAL, busy_timeout). A "pair" = INSERT one ~200 B journal row + UPDATE one run's cursor.
// Same key layout as the engine's file (schema v3): journal rows appended by rowid and found
// through a (run, seq) index, runs keyed by an integer; 100 runs in flight, each replaced by
// a new run after 10 steps. A limit on a worse layout would flatter the engine.
import Database from 'better-sqlite3';
import { join } from 'node:path';
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
    let txs = 0;
    const t0 = nowMs();
    const end = t0 + seconds * 1000;
    let t = t0;
    while (t < end) {
      tx(batch);
      txs++;
      t = nowMs();
    }
    const s = (t - t0) / 1000;
    return { txPerS: txs / s, pairsPerS: (txs * batch) / s, txs };
  } finally {
    db.close();
  }
}
