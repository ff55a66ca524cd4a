// Runs written straight into the engine's schema for the history benches (bench/history.ts,
// bench/scale-runs.ts): millions of rows in seconds, by INSERT ... SELECT over a recursive
// counter inside SQLite (no row crosses into JavaScript), in transactions of a million runs.
// Which status and workflow a run gets depends on its sequence number only (status by i % 100,
// workflow by (i / 100) % 100: independent), so a file grown in steps holds the same mix as
// one seeded at once. Run ids are UUIDv7-shaped (the sequence number, then random hex): the
// engine's own are random v4 UUIDs, but random keys cost ~20 us a row to insert into the
// primary key index (10^7 runs: minutes), against ~4 us appended. The price: the run_id index
// is packed full here, where random inserts leave its pages ~70% full (a few % of the file).
import Database from 'better-sqlite3';

export interface RunMix {
  /** Percent of runs that succeeded / failed (the rest sleep until `wakeAt`). */
  succeededPct: number;
  failedPct: number;
  /** Workflows and their percent of runs (summing to 100), in bucket order. */
  workflows: readonly (readonly [name: string, pct: number])[];
  /** The first this-many runs of the file belong to workflow 'legacy' (a retired workflow:
   *  few runs, all old), whatever the buckets say. */
  legacyRuns?: number;
  /** Steps recorded by each finished run ('do' steps; a failed run's last one failed). */
  stepsPerFinishedRun: number;
  /** When the sleeping runs wake (ms). */
  wakeAt: number;
}

/** Every run sleeping in one workflow, one 'sleep' step each: bench/history.ts. */
export const SLEEPING_ONLY: RunMix = { succeededPct: 0, failedPct: 0, workflows: [['sleeper', 100]], stepsPerFinishedRun: 0, wakeAt: Date.parse('2036-01-01T00:00:00Z') };

/** Opens a data dir's file (created by an engine, so it has the schema) for seeding: no
 *  journal, no sync, a big page cache. Preparation only: the engine under test opens the
 *  file its own way (WAL, synchronous NORMAL), which close() puts back. */
export function openForSeeding(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = DELETE');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1000000'); // ~1 GB: the random run_id index stays in memory
  return db;
}

export function closeSeeded(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.close();
}

/** The largest created_seq in the file (0 when empty): seeding continues after it. */
export const maxSeq = (db: Database.Database): number => (db.prepare('SELECT coalesce(max(created_seq), 0) AS m FROM runs').get() as { m: number }).m;

const CHUNK = 1_000_000;

/** Appends `count` runs after the file's largest created_seq. Run i (its created_seq) was
 *  created at `timeOf0 + i * spacingMs` and last changed 30 s later. */
export function seedRuns(db: Database.Database, count: number, mix: RunMix, o: { timeOf0: number; spacingMs: number }): void {
  const first = maxSeq(db) + 1;
  const wf = (() => {
    let acc = 0;
    const arms = mix.workflows.map(([name, pct]) => `WHEN wb < ${(acc += pct)} THEN '${name}'`);
    return `CASE ${mix.legacyRuns ? `WHEN i <= ${mix.legacyRuns} THEN 'legacy' ` : ''}${arms.join(' ')} ELSE '${mix.workflows[0]![0]}' END`;
  })();
  const ok = mix.succeededPct;
  const bad = ok + mix.failedPct;
  const runs = db.prepare(`
    WITH RECURSIVE c(i) AS (SELECT CAST(@from AS INTEGER) UNION ALL SELECT i + 1 FROM c WHERE i < @to),
    r AS (SELECT i, i % 100 AS sb, (i / 100) % 100 AS wb, lower(hex(randomblob(9))) AS h FROM c)
    INSERT INTO runs (run_id, workflow, version, status, input, output, error, created_at, updated_at, wake_at, created_seq)
    SELECT substr(printf('%012x', i), 1, 8) || '-' || substr(printf('%012x', i), 9, 4) || '-7' || substr(h, 1, 3) || '-a' || substr(h, 4, 3) || '-' || substr(h, 7, 12),
      ${wf}, 'v1',
      CASE WHEN sb < ${ok} THEN 'succeeded' WHEN sb < ${bad} THEN 'failed' ELSE 'sleeping' END,
      '{"orderId":' || i || ',"customer":"c_' || (i % 9973) || '"}',
      CASE WHEN sb < ${ok} THEN '{"sent":true}' END,
      CASE WHEN sb >= ${ok} AND sb < ${bad} THEN '{"name":"Error","message":"smtp down"}' END,
      @t0 + i * @dt, @t0 + i * @dt + 30000,
      CASE WHEN sb >= ${bad} THEN @wake END, i
    FROM r`);
  // Finished runs: their 'do' steps (the last of a failed run failed, after 3 attempts).
  const names = ['charge', 'ship', 'notify', 'audit', 'close'];
  const k = Array.from({ length: mix.stepsPerFinishedRun }, (_, s) => `SELECT ${s} AS seq, '${names[s % names.length]}${s >= names.length ? s : ''}' AS name`).join(' UNION ALL ');
  const last = mix.stepsPerFinishedRun - 1;
  const doSteps = k && db.prepare(`
    INSERT INTO steps (run_seq, seq, run_id, name, kind, status, attempts, result, error, started_at, ended_at, done_order)
    SELECT r.created_seq, k.seq, r.run_id, k.name, 'do',
      CASE WHEN r.status = 'failed' AND k.seq = ${last} THEN 'failed' ELSE 'succeeded' END,
      CASE WHEN r.status = 'failed' AND k.seq = ${last} THEN 3 ELSE 1 END,
      CASE WHEN r.status = 'failed' AND k.seq = ${last} THEN NULL ELSE '{"id":"ch_' || r.created_seq || '","amount":4200}' END,
      CASE WHEN r.status = 'failed' AND k.seq = ${last} THEN '{"name":"Error","message":"smtp down"}' END,
      r.created_at + k.seq * 5, r.created_at + k.seq * 5 + 3, k.seq + 1
    FROM runs r, (${k}) k
    WHERE r.created_seq BETWEEN @from AND @to AND r.status IN ('succeeded', 'failed')
    ORDER BY r.created_seq, k.seq`);
  // Sleeping runs: the one 'sleep' step they wait in.
  const sleepStep = db.prepare(`
    INSERT INTO steps (run_seq, seq, run_id, name, kind, status, attempts, started_at, wake_at)
    SELECT created_seq, 0, run_id, 'long', 'sleep', 'sleeping', 1, created_at, wake_at
    FROM runs WHERE created_seq BETWEEN @from AND @to AND status = 'sleeping' ORDER BY created_seq`);
  for (let from = first; from < first + count; from += CHUNK) {
    const range = { from, to: Math.min(from + CHUNK, first + count) - 1 };
    db.transaction(() => {
      runs.run({ ...range, t0: o.timeOf0, dt: o.spacingMs, wake: mix.wakeAt });
      if (doSteps) doSteps.run(range);
      sleepStep.run(range);
    })();
  }
}
