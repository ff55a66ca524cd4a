// TriggerStore: the engine's own state about triggers, whatever runs the workflows. The
// event inbox (dedup by event id), schedules and their slot ledger, webhook secrets,
// settings, and the run outbox: run rows a backend must start, written first and forwarded
// after, so a crash in between re-forwards instead of losing the run (the run id dedups).
//
// Writes go through write(fn): fn runs synchronously against TriggerWrites and everything it
// did commits atomically (group-committed with other writes of the same turn); the promise
// resolves only once committed. Event publishing and slot firing (src/runtime/) are written
// over this port, so both backends share them. The SQLite implementation lives in
// adapters/sqlite/trigger-store.ts; on the SQLite backend its rows are the runs themselves.
import type { RunFork } from '../domain/run-fork.ts';
import type { ControlView } from '../domain/run-control.ts';
import type { ErrorInfo } from '../domain/errors.ts';
import type { Json } from '../domain/json.ts';
import type { ParentLink } from '../domain/child-runs.ts';
import type { ChildStartRequest } from './executor.ts';
import type { BurstTrigger } from './debounce.ts';
import type { CatchUpPolicy, SlotFate } from '../domain/schedule.ts';
import type { EventFilter, EventView, ScheduleView, SlotFilter, SlotView } from './triggers.ts';

/** A run a backend must start. */
export interface OutboxRun {
  runId: string;
  workflow: string;
  /** The workflow's code version when the run was written. */
  version: string;
  input: Json;
  /** The run's trace context (StartRunRequest.traceparent). */
  traceparent?: string;
  /** When the run must end (docs/control.md); absent: no timeout. */
  deadlineAt?: number;
  /** The run whose rerun (or fork) this is (runs.rerun, runs.fork). */
  rerunOf?: string;
  /** runs.fork: the step the run is forked from and the recorded steps it starts with
   *  (handed to the backend with the run). */
  fork?: RunFork;
}

/** An outbox row as read back. */
export interface OutboxEntry extends OutboxRun {
  /** pending: written, not yet accepted by the backend; forwarded: the backend has it;
   *  failed: the backend could not keep it (`error` says why, e.g. code that diverged). */
  state: 'pending' | 'forwarded' | 'failed';
  error?: ErrorInfo;
  createdAt: number;
  updatedAt: number;
}

export interface ScheduleRecord {
  /** `<workflow>|<trigger key>`. */
  id: string;
  workflow: string;
  cron: string;
  timezone: string;
  catchUp: CatchUpPolicy;
  createdAt: number;
  /** The newest slot already decided. */
  handledUpTo: number;
  nextAt?: number;
  active: boolean;
}

/** One ledger row: a slot's fate (or a range of slots with one fate, `count` and `until`). */
export interface SlotRecord {
  scheduleId: string;
  at: number;
  fate: SlotFate;
  reason: string;
  runId?: string;
  count?: number;
  until?: number;
  now: number;
}

/** Reads and writes inside one atomic write; synchronous by design (fn must not await). */
export interface TriggerWrites {
  // ---- run outbox
  /** Inserts the run as pending unless a run with that id exists; true if inserted. */
  insertRun(run: OutboxRun, now: number): boolean;
  /** insertRun of a child run with its parent link (docs/children.md): refuses, with
   *  ValidationError and nothing written, a cycle, a depth past the limit, or an id taken by
   *  a run that is not this step's child. */
  insertChildRun?(run: OutboxRun, parent: ChildStartRequest['parent'], now: number): boolean;
  /** The backend accepted these runs. */
  markForwarded(runIds: readonly string[], now: number): void;
  /** The backend could not keep the run: it is recorded failed with why (inserted if absent). */
  recordRunFailure(run: OutboxRun, error: ErrorInfo, now: number): void;
  // ---- event inbox
  /** The runs an event started, if that event id was published before. */
  eventRunIds(eventId: string): string[] | undefined;
  insertEvent(e: { id: string; name: string; payload: Json; runIds: string[]; now: number }): void;
  // ---- schedules and slot ledger
  schedule(id: string): ScheduleRecord | undefined;
  insertSchedule(s: Omit<ScheduleRecord, 'active'>): void;
  /** Marks exactly these schedules active (policy refreshed), every other one inactive. */
  activateSchedules(active: readonly { id: string; catchUp: CatchUpPolicy }[]): void;
  /** Active schedules whose next slot is at or before `now`, earliest first. */
  dueSchedules(now: number): ScheduleRecord[];
  nextScheduleAt(): number | undefined;
  advanceSchedule(id: string, handledUpTo: number, nextAt: number | undefined): void;
  /** Records a slot's fate once (a second record of the same slot is ignored). */
  recordSlot(s: SlotRecord): void;
  /** Drops the schedule's oldest ledger rows beyond what is kept. */
  pruneSlots(scheduleId: string): void;
  // ---- webhook secrets and settings
  webhookSecret(workflow: string): string | undefined;
  /** Keeps an existing secret (first one wins). */
  insertWebhookSecret(workflow: string, secret: string, now: number): void;
  setting(key: string): string | undefined;
  setSetting(key: string, value: string): void;
  // ---- debounced triggers (docs/flow-control.md, Debounce)
  /** A debounced trigger recorded under this dedup id: the burst it joined, if it has. */
  burstTrigger(dedupId: string): { joinedRun?: string } | undefined;
  /** Records a debounced trigger once (joinedRun: the burst it joined in this write). */
  recordBurstTrigger(t: BurstTrigger, joinedRun: string | undefined, now: number): void;
  markBurstJoined(dedupId: string, runId: string): void;
}

export interface TriggerStore {
  /** Opens the store for this engine alone (an owner lease where the store is shared). */
  open(): Promise<void>;
  /** Commits what is queued, gives up ownership and closes. */
  close(): Promise<void>;
  /** Runs fn atomically; resolves with its result once committed, rejects if nothing was. */
  write<T>(fn: (w: TriggerWrites) => T): Promise<T>;
  // ---- reads
  listEvents(filter: EventFilter): Promise<EventView[]>;
  listSchedules(): Promise<ScheduleView[]>;
  /** Newest first. */
  listSlots(filter: SlotFilter): Promise<SlotView[]>;
  setting(key: string): Promise<string | undefined>;
  outboxRun(runId: string): Promise<OutboxEntry | undefined>;
  /** A child run's link to its parent (insertChildRun). */
  parentOf?(runId: string): Promise<ParentLink | undefined>;
  /** The child runs of `runId`, in start order. */
  childRunIds?(runId: string): Promise<string[]>;
  /** The run's control fields as its row keeps them (docs/control.md): deadline, rerun
   *  links (`reruns` when withLinks), and who paused it. */
  controlOf?(runId: string, withLinks: boolean): Promise<ControlView>;
  /** Debounced triggers recorded but not joined to their burst yet (oldest first). */
  unjoinedBurstTriggers(limit: number): Promise<BurstTrigger[]>;
  /** Runs written but not yet accepted by the backend (at most `limit`). */
  pendingRuns(limit: number): Promise<OutboxRun[]>;
  /** Runs started and not finished, as the SQLite backend executes them (at most `limit`):
   *  a Restate engine refuses a data dir holding any (docs/restate.md, "Switching"). */
  startedUnfinishedRuns(limit: number): Promise<{ runId: string; status: string }[]>;
  /** Retention (docs/data.md): runs past `pending` whose last local change is at or before
   *  `cutoff`, oldest first (a forwarding backend then asks itself which of them finished). */
  staleRuns?(cutoff: number, limit: number): Promise<{ runId: string; workflow: string; updatedAt: number }[]>;
  /** Removes what this store keeps of those runs (one transaction); returns how many went. */
  forgetRuns?(runIds: readonly string[], cutoff: number): Promise<number>;
  /** Removes up to `limit` inbox events created at or before `cutoff`; returns how many. */
  forgetEvents?(cutoff: number, limit: number): Promise<number>;
}
