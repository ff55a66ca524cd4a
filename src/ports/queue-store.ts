// Where a backend keeps flow-control state durably (src/runtime/queues.ts decides; this
// stores): the queues' definitions, the step bodies waiting for a slot in their order, the
// slots held, and the recent starts a rate limit counts. The SQLite backend implements it
// (src/adapters/sqlite/queue-store.ts); every write resolves once durable.
import type { QueueLimits } from '../domain/rate-limit.ts';

/** The `step` of a run's own slot (run-level flow control: the run holds it from its start
 *  to its end); a step body's slot has the step's name. */
export const RUN_SLOT = '';

/** One step body (or run) waiting for (or holding) a slot. `order`: its place, smaller first. */
export interface QueuedStep {
  queue: string;
  key: string;
  runId: string;
  step: string;
  order: number;
  at: number;
  /** Higher first among those waiting (a run's `runs.priority`); absent: 0. */
  priority?: number;
}

export interface RecoveredQueues {
  /** Waiting at the last stop or crash, of runs not finished, in order. The step bodies that
   *  held a slot then are among them at their place (the owner's lease was taken over: its
   *  slots are free, and those bodies never recorded an end). */
  waiting: QueuedStep[];
  /** Run slots (RUN_SLOT) of runs not finished: still held (a run holds its slot from its
   *  start to its end, across restarts). */
  held: QueuedStep[];
  /** Starts recent enough to count against a rate limit. */
  starts: { queue: string; key: string; at: number }[];
  /** The largest order ever given (new waiters go after it). */
  maxOrder: number;
}

/** What writeHolds records: slots still held and not yet written, and written ones that ended. */
export interface HoldRows {
  add: QueuedStep[];
  drop: { runId: string; step: string }[];
}

export interface QueueStore {
  /** Records the queues' current limits (for `why` and `queues list` from another process). */
  define(queues: { name: string; limits: QueueLimits }[], now: number): Promise<void>;
  /** At start, before any acquire: what the last owner left (see RecoveredQueues). */
  recover(startsSince: number): RecoveredQueues;
  wait(step: QueuedStep): Promise<void>;
  /** The step leaves the line (if it waited) and holds a slot; `countStart`: recorded for
   *  the rate limit. One transaction. */
  grant(step: QueuedStep, now: number, countStart: boolean): Promise<void>;
  release(runId: string, step: string): void;
  /** The fast path's slot rows (src/runtime/queues.ts, tryAcquire), written in batches: one
   *  write in the next group commit, which asks `take` then (inside its transaction) for the
   *  slots to record and the recorded ones to drop. Not awaited: see queues.ts on why a lost
   *  row loses no promise. */
  writeHolds(take: () => HoldRows): void;
  /** A waiter gave up (its run was cancelled or the engine stops). */
  leave(runId: string, step: string): void;
  /** A start recorded at `from` (by grant) happened at `to`: one such row is moved. Not awaited. */
  restamp(queue: string, key: string, from: number, to: number): void;
  /** Drops starts older than `before` (no longer counted by any rate limit of the queue). */
  prune(queue: string, before: number): void;
}
