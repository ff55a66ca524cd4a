// The TriggerStore port on the engine's SQLite file. Owns the file's lifecycle for whichever
// backend runs the workflows: opening it for one owner (the OwnerLease is taken on open),
// group commit (CommitQueue: every write() shares a transaction with the writes of its turn
// and resolves once committed), and a clean close. On the SQLite backend the outbox rows ARE
// the runs, and the SQLite executor works on the same connection (`store`, `queue`,
// `writes`), so a due-run claim and the slots it fires commit in one transaction.
import type { RunFork } from '../../domain/run-fork.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import type { ControlView } from '../../domain/run-control.ts';
import type { RunView } from '../../domain/run-view.ts';
import { randomUUID } from '../../platform/random-uuid.ts';
import { identityCodec, type PayloadCodec } from '../../domain/payload-codec.ts';
import { RUN_STATUSES, TERMINAL, type RunStatus } from '../../domain/run-status.ts';
import type { ParentLink } from '../../domain/child-runs.ts';
import type { EventFilter, EventView, ScheduleView, SlotFilter, SlotView } from '../../ports/triggers.ts';
import type { OutboxEntry, OutboxRun, ScheduleRecord, TriggerStore, TriggerWrites } from '../../ports/trigger-store.ts';
import { checkCodec } from './codec-check.ts';
import { CommitQueue } from './commit-queue.ts';
import type { FaultPoints } from './fault-points.ts';
import type { OwnerLease } from './owner-lease.ts';
import { openOwned, SqliteStore, type Durability, type RunRow } from './store.ts';
import { TriggerTables, type ScheduleRow } from './trigger-tables.ts';
import { BurstTriggerTable } from './burst-triggers.ts';
import type { BurstTrigger } from '../../ports/debounce.ts';

export interface SqliteTriggerStoreOptions {
  dataDir: string;
  durability: Durability;
  /** Test-only named fault points (the group commit's 'mid-batch'); absent in production. */
  faults?: FaultPoints;
  /** Payload codec (encryption at rest); default identity. Checked against the file on open. */
  codec?: PayloadCodec;
}

/** Started and not finished, as an SQL list: an IN list the (status, created_seq) index
 *  answers, where NOT IN would read every run (a Restate data dir keeps one row per run). */
const STARTED_UNFINISHED = RUN_STATUSES.filter((s) => s !== 'pending' && !TERMINAL.has(s)).map((s) => `'${s}'`).join(', ');

export class SqliteTriggerStore implements TriggerStore {
  /** The open file; set by open(). The SQLite executor shares it (same adapter). */
  store!: SqliteStore;
  queue!: CommitQueue;
  /** TriggerWrites on the connection: valid inside any transaction on `store`. */
  writes!: TriggerWrites;
  private bursts!: BurstTriggerTable;
  private tables!: TriggerTables;
  private lease: OwnerLease | undefined;

  constructor(private readonly o: SqliteTriggerStoreOptions) {}

  async open(): Promise<void> {
    this.openNow();
  }

  /** open(), for a caller that must not yield before the file is ours. */
  openNow(): void {
    // Opened once per engine: on Restate with a drain, the Restate executor and the draining
    // SQLite executor share this file (compose/container.ts).
    if (this.lease) return;
    const codec = this.o.codec ?? identityCodec;
    // A missing or wrong key is refused before the lease is taken: nothing is written.
    const { db, lease } = openOwned(this.o.dataDir, this.o.durability, randomUUID(), (d) => checkCodec(d, codec, { record: false }));
    try {
      checkCodec(db, codec, { record: true });
    } catch (err) {
      lease.release();
      db.close();
      throw err;
    }
    this.store = new SqliteStore(db, codec);
    this.store.links.ownedFile();
    this.lease = lease;
    // TRANQUIL_FSYNC=inline: the commit's fsync on the event loop, as before WalSync (the
    // bench's side-by-side row; diagnostics). Anything else: fsync on the thread pool.
    this.queue = new CommitQueue(this.store, this.o.faults, { inline: process.env.TRANQUIL_FSYNC === 'inline' });
    this.tables = new TriggerTables(db, codec);
    this.bursts = new BurstTriggerTable(db, codec);
    this.writes = writesOn(this.store, this.tables, this.bursts);
  }

  async close(): Promise<void> {
    if (!this.lease) return;
    // Flush what is queued, so every acknowledged write is in the file.
    await new Promise((r) => setImmediate(r));
    while (this.queue.size > 0) await new Promise((r) => setImmediate(r));
    // The checkpoint worker's connection closes first: the owner's close is then the last,
    // which checkpoints the -wal into the file and removes it (the clean-stop mark needs that).
    await this.queue.close();
    this.lease.release();
    this.lease = undefined;
    this.store.close({ clean: true });
  }

  /** Fault injection only: as if the process died. Nothing is flushed or released (the lease
   *  row stays, as a dead process leaves it) and nothing is written after. */
  abandon(): void {
    this.lease?.abandon();
    this.lease = undefined;
    this.queue?.abandon();
    this.store?.close();
  }

  write<T>(fn: (w: TriggerWrites) => T): Promise<T> {
    return this.queue.enqueue(() => fn(this.writes));
  }

  async listEvents(filter: EventFilter): Promise<EventView[]> {
    return this.tables.listEvents(filter);
  }

  async listSchedules(): Promise<ScheduleView[]> {
    return this.tables.listSchedules();
  }

  async listSlots(filter: SlotFilter): Promise<SlotView[]> {
    return this.tables.listSlots(filter);
  }

  async setting(key: string): Promise<string | undefined> {
    return this.tables.setting(key);
  }

  async parentOf(runId: string): Promise<ParentLink | undefined> {
    return this.store.links.parentOf(runId);
  }

  async controlOf(runId: string, withLinks: boolean): Promise<ControlView> {
    const row = this.store.getRunRow(runId);
    if (!row) return {};
    const v = this.store.control.decorate(row, {} as RunView, withLinks);
    return { deadline: v.deadline, rerunOf: v.rerunOf, reruns: v.reruns, paused: v.paused, forkedFrom: v.forkedFrom };
  }

  async childRunIds(runId: string): Promise<string[]> {
    return this.store.links.childIds(runId);
  }

  async outboxRun(runId: string): Promise<OutboxEntry | undefined> {
    const row = this.store.getRunRow(runId);
    return row && toEntry(row, this.store.codec);
  }

  async staleRuns(cutoff: number, limit: number): Promise<{ runId: string; workflow: string; updatedAt: number }[]> {
    const rows = this.store.db
      .prepare(`SELECT run_id, workflow, updated_at FROM runs WHERE status != 'pending' AND updated_at <= ? ORDER BY updated_at LIMIT ?`)
      .all(cutoff, limit) as { run_id: string; workflow: string; updated_at: number }[];
    return rows.map((r) => ({ runId: r.run_id, workflow: r.workflow, updatedAt: r.updated_at }));
  }

  forgetRuns(runIds: readonly string[], cutoff: number): Promise<number> {
    const del = this.store.db.prepare(`DELETE FROM runs WHERE run_id = ? AND status != 'pending' AND updated_at <= ?`);
    const sig = this.store.db.prepare(`DELETE FROM signals WHERE run_id = ?`);
    return this.queue.enqueue(() => runIds.reduce((n, id) => (del.run(id, cutoff).changes > 0 ? (sig.run(id), n + 1) : n), 0));
  }

  forgetEvents(cutoff: number, limit: number): Promise<number> {
    const del = this.store.db.prepare(`DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE created_at <= ? LIMIT ?)`);
    return this.queue.enqueue(() => del.run(cutoff, limit).changes);
  }

  async unjoinedBurstTriggers(limit: number): Promise<BurstTrigger[]> {
    return this.bursts.unjoined(limit);
  }

  async pendingRuns(limit: number): Promise<OutboxRun[]> {
    // A drained SQLite run that was retried is pending again: it stays local, never forwarded.
    const rows = this.store.listRunRows({ status: 'pending', limit });
    const drained = rows.length ? new Set(this.drainedRunIds()) : undefined;
    return rows.filter((r) => !drained?.has(r.run_id)).map((r) => toOutboxRun(r, this.store.codec));
  }

  async startedUnfinishedRuns(limit: number): Promise<{ runId: string; status: string }[]> {
    return this.store.db
      .prepare(`SELECT run_id AS runId, status FROM runs WHERE status IN (${STARTED_UNFINISHED}) AND run_id NOT IN (SELECT run_id FROM drain_runs) ORDER BY created_seq LIMIT ?`)
      .all(limit) as { runId: string; status: string }[];
  }

  // ---- the drain from SQLite (docs/restate.md, "Switching a data dir from SQLite") ------

  /** Marks every run the SQLite backend started and has not finished as drained (kept on
   *  SQLite to the end), and returns all drained run ids. Telling them from the Restate
   *  outbox's own rows in the same table: in a file never started on Restate (no engine id
   *  yet) every started unfinished run is SQLite's; afterwards the outbox's rows are only
   *  pending, running (forwarded) or failed and never have journal rows, so a run sleeping,
   *  waiting, retrying, parked or blocked, or running with a journal, is SQLite's. */
  async adoptDrain(engineIdSetting: string, now: number): Promise<string[]> {
    return this.queue.enqueue(() => {
      const never = this.tables.setting(engineIdSetting) === undefined ? 1 : 0;
      this.store.db
        .prepare(
          `INSERT OR IGNORE INTO drain_runs (run_id, since)
           SELECT run_id, @now FROM runs WHERE status IN (${STARTED_UNFINISHED})
             AND (@never = 1 OR status != 'running' OR EXISTS (SELECT 1 FROM steps WHERE steps.run_seq = runs.created_seq))`,
        )
        .run({ now, never });
      return this.drainedRunIds();
    });
  }

  /** Every run id in the drain table (finished ones too: they stay readable as SQLite's). */
  drainedRunIds(): string[] {
    return (this.store.db.prepare('SELECT run_id FROM drain_runs').all() as { run_id: string }[]).map((r) => r.run_id);
  }

}

function writesOn(store: SqliteStore, tables: TriggerTables, bursts: BurstTriggerTable): TriggerWrites {
  return {
    insertRun: (r, now) => {
      const made = store.insertRun({ runId: r.runId, workflow: r.workflow, version: r.version, input: r.input, now, traceparent: r.traceparent });
      if (made) store.control.set(r.runId, r.deadlineAt, r.rerunOf);
      // Kept until forwarded: a restart forwards a pending row again, with them.
      if (made && r.fork) store.control.fork(r.runId, r.fork.from, store.codec.encode(JSON.stringify(r.fork.entries)));
      return made;
    },
    insertChildRun: (r, parent, now) => {
      const link = store.links.check({ ...r, fork: undefined, parent }, store.getRunRow(r.runId) !== undefined);
      const made = store.insertRun({ runId: r.runId, workflow: r.workflow, version: r.version, input: r.input, now, traceparent: r.traceparent });
      if (made) store.control.set(r.runId, r.deadlineAt, r.rerunOf);
      if (made && link) store.links.insert(r.runId, link);
      return made;
    },
    markForwarded: (runIds, now) => {
      for (const id of runIds) store.setStatus(id, 'running', undefined, now);
    },
    recordRunFailure: (r, error, now) => {
      store.insertRun({ runId: r.runId, workflow: r.workflow, version: r.version, input: r.input, now });
      store.finishRun(r.runId, 'failed', now, undefined, error);
    },
    eventRunIds: (id) => store.eventRunIds(id),
    insertEvent: (e) => store.insertEvent(e.id, e.name, e.payload, e.runIds, e.now),
    schedule: (id) => {
      const row = tables.schedule(id);
      return row && toSchedule(row);
    },
    insertSchedule: (s) =>
      tables.insertSchedule({
        id: s.id, workflow: s.workflow, cron: s.cron, timezone: s.timezone, catch_up: s.catchUp, created_at: s.createdAt,
        handled_up_to: s.handledUpTo, next_at: s.nextAt ?? null,
      }),
    activateSchedules: (active) => tables.activate(active),
    dueSchedules: (now) => tables.dueSchedules(now).map(toSchedule),
    nextScheduleAt: () => tables.nextScheduleAt(),
    advanceSchedule: (id, handledUpTo, nextAt) => tables.advanceSchedule(id, handledUpTo, nextAt),
    recordSlot: (s) => tables.recordSlot(s),
    pruneSlots: (id) => tables.pruneSlots(id),
    webhookSecret: (workflow) => tables.webhookSecret(workflow),
    insertWebhookSecret: (workflow, secret, now) => tables.insertWebhookSecret(workflow, secret, now),
    setting: (key) => tables.setting(key),
    setSetting: (key, value) => tables.setSetting(key, value),
    burstTrigger: (id) => bursts.get(id),
    recordBurstTrigger: (t, joinedRun, now) => bursts.record(t, joinedRun, now),
    markBurstJoined: (id, runId) => bursts.markJoined(id, runId),
  };
}

function toSchedule(r: ScheduleRow): ScheduleRecord {
  const s: ScheduleRecord = {
    id: r.id, workflow: r.workflow, cron: r.cron, timezone: r.timezone, catchUp: r.catch_up, createdAt: r.created_at,
    handledUpTo: r.handled_up_to, active: r.active === 1,
  };
  if (r.next_at != null) s.nextAt = r.next_at;
  return s;
}

const toOutboxRun = (r: RunRow, codec: PayloadCodec = identityCodec): OutboxRun => ({
  runId: r.run_id, workflow: r.workflow, version: r.version, input: JSON.parse(codec.decode(r.input)), ...(r.trace_parent ? { traceparent: r.trace_parent } : {}),
  ...(r.deadline_at != null ? { deadlineAt: r.deadline_at } : {}), ...(r.rerun_of != null ? { rerunOf: r.rerun_of } : {}),
  ...(r.fork_from != null ? { fork: { from: JSON.parse(r.fork_from) as RunFork['from'], entries: r.fork_steps != null ? JSON.parse(codec.decode(r.fork_steps)) as JournalEntry[] : [] } } : {}),
});

/** On the SQLite backend a run row past 'pending' is the run itself: "the backend has it". */
const STATE: Partial<Record<RunStatus, OutboxEntry['state']>> = { pending: 'pending', failed: 'failed' };

/** A run row as the outbox entry it is for a forwarding backend. */
export function toEntry(r: RunRow, codec: PayloadCodec = identityCodec): OutboxEntry {
  const e: OutboxEntry = { ...toOutboxRun(r, codec), state: STATE[r.status] ?? 'forwarded', createdAt: r.created_at, updatedAt: r.updated_at };
  if (r.error != null) e.error = JSON.parse(codec.decode(r.error));
  return e;
}
