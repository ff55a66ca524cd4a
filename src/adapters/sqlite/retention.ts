// Retention on the SQLite file (docs/data.md): finished runs older than the configured age are
// removed with their journal (steps), signals and child output, and inbox events older than
// the age, in small batches. Each batch is ONE transaction through the CommitQueue, so the
// engine's own commits interleave with it: a step commit queued behind the sweeper waits for
// at most one batch. After each batch the pages it freed are given back to the file system
// (PRAGMA incremental_vacuum; the file is in auto_vacuum = INCREMENTAL mode from schema 6).
// Live runs are never touched: the DELETE itself re-checks the status and the age, in the same
// transaction, so a run retried between the look and the delete stays.
import { FINISHED, cutoffOf, type GcOptions, type GcReport, type GcRun, type RetentionSettings } from '../../domain/retention.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import type Database from 'better-sqlite3';
import type { CommitQueue } from './commit-queue.ts';
import type { SqliteStore } from './store.ts';
import { isoTime } from '../../domain/iso-time.ts';
import { setLongInterval } from '../../runtime/long-timer.ts';

const IN_FINISHED = `status IN (${FINISHED.map((s) => `'${s}'`).join(', ')})`;
/** Pages given back per batch: bounded, so the vacuum step is as short as a batch. */
const VACUUM_PAGES_PER_BATCH = 2000;
const SAMPLE = 100;

/** The finished runs by age: the partial index runs_finished, named. Left to choose, SQLite
 *  took runs_status (IN on its first column looks better to it without statistics) and
 *  sorted every finished run for each batch of 100: a sweep of 10,000 runs at 10^6 runs in
 *  the file took minutes, on the host's thread (bench/scale-runs.ts, issue 44). */
const FINISHED_BY_AGE = `runs INDEXED BY runs_finished WHERE ${IN_FINISHED} AND updated_at <= ?`;

function candidates(db: Database.Database, cutoff: number, limit: number): GcRun[] {
  const rows = db.prepare(`SELECT run_id, workflow, status, updated_at FROM ${FINISHED_BY_AGE} ORDER BY updated_at LIMIT ?`).all(cutoff, limit) as {
    run_id: string; workflow: string; status: RunStatus; updated_at: number;
  }[];
  return rows.map((r) => ({ runId: r.run_id, workflow: r.workflow, status: r.status, finishedAt: isoTime(r.updated_at) }));
}

/** What a sweep at `now` would remove: SELECTs only, so the CLI runs it on a read-only open
 *  of the file while an engine owns it (`tranquil gc --dry-run`). */
export function gcDryRun(db: Database.Database, now: number, settings: RetentionSettings): GcReport {
  const cutoff = cutoffOf(now, settings);
  const count = (sql: string) => (db.prepare(sql).get(cutoff) as { n: number }).n;
  return {
    dryRun: true, cutoff: isoTime(cutoff),
    runs: count(`SELECT count(*) AS n FROM ${FINISHED_BY_AGE}`),
    sample: candidates(db, cutoff, SAMPLE),
    events: count(`SELECT count(*) AS n FROM events WHERE created_at <= ?`),
    batches: 0, pagesReclaimed: 0, unreferencedVersions: [],
  };
}

export class SqliteRetention {
  private readonly s;
  private stopTimer: (() => void) | undefined;
  private sweeping: Promise<GcReport> | undefined;

  /** `swept`: told what each sweep deleted (metrics, docs/observability.md). */
  constructor(
    private readonly store: SqliteStore,
    private readonly queue: CommitQueue,
    private readonly settings: RetentionSettings,
    private readonly swept?: (runs: number, events: number) => void,
  ) {
    const q = (sql: string) => store.db.prepare(sql);
    this.s = {
      deleteRun: q(`DELETE FROM runs WHERE run_id = ? AND ${IN_FINISHED} AND updated_at <= ? RETURNING created_seq, version`),
      deleteSteps: q(`DELETE FROM steps WHERE run_seq = ?`),
      deleteSignals: q(`DELETE FROM signals WHERE run_id = ?`),
      deleteOutput: q(`DELETE FROM run_output WHERE run_id = ?`),
      deleteLink: q(`DELETE FROM run_links WHERE run_id = ?`),
      deleteEvents: q(`DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE created_at <= ? LIMIT ?)`),
      // No index has version: this stops at the first run found, and reads the whole table
      // only for a version that is really gone (rare). `SELECT DISTINCT version` before and
      // after every sweep read the table twice each time (~0.75 s each at 1,000,000 runs, on
      // the host's event loop).
      versionUsed: q(`SELECT 1 FROM runs WHERE version = ? LIMIT 1`),
      freePages: q(`PRAGMA freelist_count`),
    };
  }

  /** Sweeps every `intervalMs` (real time) while the engine runs; the first sweep soon after
   *  start. Any accepted period (config retention.sweepEvery, up to 100 years): a setInterval
   *  past 24.8 days swept every millisecond. */
  startSweeping(now: () => number, intervalMs: number, onError: (err: unknown) => void): void {
    const tick = () => void this.gc(now(), {}).catch(onError);
    this.stopTimer = setLongInterval(tick, intervalMs, { unref: true });
  }

  stopSweeping(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
  }

  /** One sweep at a time: a second call while one runs gets that one's report. */
  gc(now: number, o: GcOptions): Promise<GcReport> {
    if (o.dryRun) return Promise.resolve(this.dryRun(now));
    if (!this.sweeping) this.sweeping = this.sweep(now).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** What a sweep at `now` would remove (read-only). */
  dryRun(now: number): GcReport {
    return gcDryRun(this.store.db, now, this.settings);
  }

  private candidates(cutoff: number, limit: number): GcRun[] {
    return candidates(this.store.db, cutoff, limit);
  }

  private async sweep(now: number): Promise<GcReport> {
    const cutoff = cutoffOf(now, this.settings);
    const report: GcReport = { dryRun: false, cutoff: isoTime(cutoff), runs: 0, sample: [], events: 0, batches: 0, pagesReclaimed: 0, unreferencedVersions: [] };
    // Versions whose runs this sweep deleted: the candidates for "no run uses it any more".
    const touched = new Set<string>();
    for (;;) {
      const batch = this.candidates(cutoff, this.settings.batchSize);
      if (batch.length === 0) break;
      const removed = await this.queue.enqueue(() => {
        let n = 0;
        for (const r of batch) {
          const row = this.s.deleteRun.get(r.runId, cutoff) as { created_seq: number; version: string } | undefined;
          if (!row) continue; // retried (live again) since the look: left alone
          touched.add(row.version);
          this.s.deleteSteps.run(row.created_seq);
          this.s.deleteSignals.run(r.runId);
          this.s.deleteOutput.run(r.runId);
          this.s.deleteLink.run(r.runId);
          n++;
        }
        return n;
      });
      report.runs += removed;
      if (report.sample.length < SAMPLE) report.sample.push(...batch.slice(0, SAMPLE - report.sample.length));
      report.batches++;
      report.pagesReclaimed += await this.reclaim();
      if (removed === 0) break; // every candidate came back to life: nothing more to do now
      await new Promise((r) => setImmediate(r)); // the engine's own work goes first
    }
    for (;;) {
      const n = await this.queue.enqueue(() => this.s.deleteEvents.run(cutoff, this.settings.batchSize).changes);
      report.events += n;
      if (n === 0) break;
      report.batches++;
      report.pagesReclaimed += await this.reclaim();
      await new Promise((r) => setImmediate(r));
    }
    report.unreferencedVersions = [...touched].filter((v) => this.s.versionUsed.get(v) === undefined);
    if (this.settings.dropVersions && report.unreferencedVersions.length > 0) report.snapshotsRemoved = this.settings.dropVersions(report.unreferencedVersions);
    this.swept?.(report.runs, report.events);
    return report;
  }

  /** Gives back up to VACUUM_PAGES_PER_BATCH free pages; returns how many. */
  private async reclaim(): Promise<number> {
    return this.queue.enqueue(() => {
      const before = (this.s.freePages.get() as { freelist_count: number }).freelist_count;
      if (before === 0) return 0;
      this.store.db.pragma(`incremental_vacuum(${VACUUM_PAGES_PER_BATCH})`);
      return before - (this.s.freePages.get() as { freelist_count: number }).freelist_count;
    });
  }
}
