// The physical limit: raw better-sqlite3 with the engine's pragmas (WAL, synchronous FULL or
// NORMAL, busy_timeout). A "pair" = INSERT one ~200 B journal row + UPDATE one run's cursor.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { STEP_RESULT } from './workflows.ts';
import { nowMs } from './stats.ts';

const NRUNS = 1000;
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
    db.exec(`CREATE TABLE runs (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, cursor INTEGER NOT NULL, updated_at INTEGER NOT NULL);
             CREATE TABLE journal (run_id TEXT NOT NULL, seq INTEGER NOT NULL, step_name TEXT NOT NULL, status TEXT NOT NULL,
                                   result_json TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;`);
    const ids = Array.from({ length: NRUNS }, (_, i) => `run-${String(i).padStart(6, '0')}`);
    const ins = db.prepare('INSERT INTO runs VALUES (?, ?, 0, 0)');
    db.transaction(() => { for (const id of ids) ins.run(id, 'running'); })();
    const insJ = db.prepare('INSERT INTO journal (run_id, seq, step_name, status, result_json) VALUES (?, ?, ?, ?, ?)');
    const updR = db.prepare('UPDATE runs SET cursor = ?, updated_at = ? WHERE run_id = ?');
    const cursors = new Int32Array(NRUNS);
    let k = 0;
    const tx = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) {
        const r = k++ % NRUNS;
        const seq = ++cursors[r]!;
        insJ.run(ids[r], seq, `step-${seq}`, 'succeeded', RESULT);
        updR.run(seq, k, ids[r]);
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
