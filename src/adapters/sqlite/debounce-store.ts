// Run-level debounce on SQLite (docs/flow-control.md, Debounce): one row per pending burst
// (table debounce_pending, migration 13) holding its run id, its last input and when it is
// due. The row is the burst's durable state: an engine that restarts finds it and the
// scheduler (the one timer sleeps and schedules use) fires it when due. Every write is a
// read-modify-write inside the commit queue, whose writes run one at a time in order, so a
// trigger and a firing of the same burst never interleave.
import type Database from 'better-sqlite3';
import { debounceDueAt } from '../../../sdk/debounce.ts';
import type { Json } from '../../domain/json.ts';
import type { BurstTrigger, DebounceRequest, DebounceResult, Debouncer, PendingBurst } from '../../ports/debounce.ts';
import type { TriggerWrites } from '../../ports/trigger-store.ts';
import type { StartRunRequest } from '../../ports/executor.ts';
import type { TimerClaim } from '../../ports/scheduler.ts';
import type { CommitQueue } from './commit-queue.ts';

interface Row {
  workflow: string;
  key: string;
  run_id: string;
  input: string;
  first_at: number;
  due_at: number;
  traceparent: string | null;
  count: number;
}

/** How a firing found its burst changed by a trigger queued between its read and its write. */
class BurstMoved extends Error {}

/** A burst whose run could not be created (storage) is tried again this much later. */
const RETRY_MS = 1000;

export interface SqliteDebouncerHost {
  db: Database.Database;
  commits: CommitQueue;
  /** The trigger store's writes on the same file (its dedup records of triggers). */
  writes: TriggerWrites;
  now(): number;
  armAt(at: number): void;
  /** Whether the workflow is registered: a burst of one removed from the code waits for it. */
  known(workflow: string): boolean;
  /** Creates the run; `before` runs inside the run's write, before its insert. */
  start(req: StartRunRequest, before: () => void): Promise<unknown>;
}

export class SqliteDebouncer implements Debouncer {
  private readonly s;
  /** Bursts being fired now (by run id): a second scan must not fire them again. */
  private readonly firing = new Set<string>();

  constructor(private readonly h: SqliteDebouncerHost) {
    const db = h.db;
    this.s = {
      get: db.prepare(`SELECT * FROM debounce_pending WHERE workflow = ? AND key = ?`),
      insert: db.prepare(`INSERT INTO debounce_pending (workflow, key, run_id, input, first_at, due_at, traceparent) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      update: db.prepare(`UPDATE debounce_pending SET input = ?, due_at = ?, count = count + 1 WHERE workflow = ? AND key = ?`),
      dueOf: db.prepare(`SELECT due_at FROM debounce_pending WHERE run_id = ?`).pluck(),
      remove: db.prepare(`DELETE FROM debounce_pending WHERE run_id = ?`),
      byRun: db.prepare(`SELECT 1 FROM debounce_pending WHERE run_id = ?`).pluck(),
      due: db.prepare(`SELECT * FROM debounce_pending WHERE due_at <= ? ORDER BY due_at LIMIT ?`),
      next: db.prepare(`SELECT MIN(due_at) FROM debounce_pending`).pluck(),
      later: db.prepare(`UPDATE debounce_pending SET due_at = ? WHERE run_id = ? AND due_at <= ?`),
    };
  }

  async debounce(req: DebounceRequest): Promise<DebounceResult> {
    const r = await this.h.commits.enqueue(() => this.join(req, this.h.now()));
    this.h.armAt(r.dueAt);
    return r;
  }

  joinInWrite(_w: TriggerWrites, t: BurstTrigger, now: number): void {
    // Inside the caller's write on this same file: the join commits with the event (or slot).
    this.h.armAt(this.join(t, now).dueAt);
  }

  async flush(): Promise<void> {
    // Every trigger joins in its own write here: nothing is left to join.
  }

  async pending(filter: { workflow?: string; runId?: string } = {}): Promise<PendingBurst[]> {
    return readPendingBursts(this.h.db, filter);
  }

  /** Inside a write: opens or joins the burst, once per dedup id. */
  private join(req: DebounceRequest, now: number): DebounceResult {
    const seen = req.dedupId === undefined ? undefined : this.h.writes.burstTrigger(req.dedupId);
    if (seen?.joinedRun !== undefined) {
      const due = this.s.dueOf.get(seen.joinedRun) as number | undefined;
      return { runId: seen.joinedRun, created: false, dueAt: due ?? now, duplicate: true };
    }
    const text = JSON.stringify(req.input);
    const row = this.s.get.get(req.workflow, req.key) as Row | undefined;
    let r: DebounceResult;
    if (!row) {
      const dueAt = debounceDueAt(req, now, now);
      this.s.insert.run(req.workflow, req.key, req.runId, text, now, dueAt, req.traceparent ?? null);
      r = { runId: req.runId, created: true, dueAt };
    } else {
      // The limits the code has now apply to the burst (a changed period takes effect here).
      const dueAt = debounceDueAt(req, row.first_at, now);
      this.s.update.run(text, dueAt, req.workflow, req.key);
      r = { runId: row.run_id, created: false, dueAt };
    }
    if (req.dedupId !== undefined) this.h.writes.recordBurstTrigger({ ...req, dedupId: req.dedupId }, r.runId, now);
    return r;
  }

  async debouncing(runId: string): Promise<boolean> {
    return this.s.byRun.get(runId) !== undefined;
  }

  /** The scheduler's claim: fires every due burst not being fired already. */
  claimDue(now: number, batch: number): TimerClaim {
    const rows = this.s.due.all(now, batch) as Row[];
    for (const row of rows) if (!this.firing.has(row.run_id) && this.h.known(row.workflow)) this.fire(row);
    return { more: false, nextAt: this.nextAt(now) };
  }

  private nextAt(now: number): number | undefined {
    const next = this.s.next.get() as number | null;
    // A burst due now is being fired: its end re-arms what is left.
    return next === null ? undefined : Math.max(next, now + 1);
  }

  /** Creates the burst's run with its last input, in one write with the row's removal. */
  private fire(row: Row): void {
    this.firing.add(row.run_id);
    const req: StartRunRequest = { workflow: row.workflow, input: JSON.parse(row.input) as Json, runId: row.run_id, ...(row.traceparent ? { traceparent: row.traceparent } : {}) };
    const before = () => {
      const now = this.s.get.get(row.workflow, row.key) as Row | undefined;
      // A trigger written after our read: the burst moved on (its new due time re-arms it).
      if (!now || now.run_id !== row.run_id || now.input !== row.input || now.due_at !== row.due_at) throw new BurstMoved('moved');
      this.s.remove.run(row.run_id);
    };
    this.h.start(req, before).then(
      () => this.settled(row.run_id),
      (err: unknown) => {
        if (!(err instanceof BurstMoved)) {
          console.error(`tranquil: starting the debounced run ${row.run_id} of '${row.workflow}' failed (tried again in ${RETRY_MS / 1000} s): ${(err as Error)?.message ?? err}`);
          const at = this.h.now() + RETRY_MS;
          this.h.commits.enqueue(() => this.s.later.run(at, row.run_id, at)).catch(() => {}).finally(() => this.settled(row.run_id));
          return;
        }
        this.settled(row.run_id);
      },
    );
  }

  private settled(runId: string): void {
    this.firing.delete(runId);
    const next = this.s.next.get() as number | null;
    if (next !== null) this.h.armAt(Math.max(next, this.h.now() + (this.firing.size ? 1 : 0)));
  }
}

/** The bursts collecting now in the file, soonest due first (at most 1,000); also read by
 *  the CLI from a read-only file. */
export function readPendingBursts(db: Database.Database, filter: { workflow?: string; runId?: string } = {}): PendingBurst[] {
  const rows = db
    .prepare(`SELECT * FROM debounce_pending WHERE (@workflow IS NULL OR workflow = @workflow) AND (@runId IS NULL OR run_id = @runId) ORDER BY due_at LIMIT 1000`)
    .all({ workflow: filter.workflow ?? null, runId: filter.runId ?? null }) as Row[];
  return rows.map((r) => ({ workflow: r.workflow, key: r.key, runId: r.run_id, count: r.count, firstAt: r.first_at, dueAt: r.due_at }));
}
