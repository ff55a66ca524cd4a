// The step log: what one RunSession reads and appends to while it replays and executes a
// run. Every place a workflow runs implements it once: the SQLite executor in-process, the
// Restate handler on top of ctx.run / ctx.sleep / durable promises, and (next) a Deno child
// over the loopback protocol. Replay decisions are not made here: they live in the session
// and the pure domain. Every promise resolves only once what it wrote is durable.
import type { CapabilityRequest } from '../domain/capability.ts';
import type { ErrorInfo } from '../domain/errors.ts';
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';
import type { RecordedStep, StepCall } from '../domain/replay.ts';
import type { QueueSpec } from '../domain/rate-limit.ts';
import type { ChildStartRequest } from './executor.ts';

/** step.start's request: `runId` absent = derived from the parent and the step by the log
 *  (domain/child-id.ts, on the engine's side: a Deno workflow child has no digest library). */
export type ChildStartCall = Omit<ChildStartRequest, 'runId'> & { runId?: string };

/** Which step a log found journaled at a position (to tell a changed workflow apart). */
export type Recorded = RecordedStep;

/** What emit answers: the step found at that position, or `refused` (an event schema
 *  refused the payload: the emit was recorded as failed with that error, nothing published). */
export type EmitRecorded = Recorded & { refused?: ErrorInfo };

/** How one attempt of a step body ended. Never a thrown error: an outcome is data. */
export type AttemptResult =
  /** `text` is the JSON text of `value`; both absent = the body returned undefined. */
  | { ok: true; value?: Json; text?: string }
  /** `terminal`: a TerminalError, never retried. `fatal`: the run fails at once (e.g. a result
   *  that is not JSON). */
  | { ok: false; error: ErrorInfo; terminal: boolean; fatal?: boolean };

/** What bounds one attempt, for a log whose body runs where it may hang unseen (a Deno
 *  child: the engine's watchdog kills it when the step's timeout passes). */
export interface AttemptLimits {
  timeoutMs?: number;
  /** The body is the engine's own and ends without waiting for any other step (a child
   *  run's start, ctx.signal's send): a log may hold its start back behind other such
   *  bodies (the Restate driver's window, src/adapters/restate/driver.ts). */
  bounded?: boolean;
}

/** Marks a step body as `bounded` (AttemptLimits): set on the body function by the engine's
 *  own steps (child-steps.ts), never by workflow code. */
export const BOUNDED_BODY: unique symbol = Symbol('tranquil.boundedBody');

/** `body`, marked bounded. */
export function boundedBody<F extends (...args: never[]) => unknown>(body: F): F {
  return Object.assign(body, { [BOUNDED_BODY]: true });
}

/** A step body's claim on a queue slot (src/runtime/queues.ts). */
export interface SlotRequest {
  /** A queue definition (sdk queue()) or the name of one the engine knows. */
  queue: QueueSpec | string;
  key: string;
  runId: string;
  /** The step's name in its run (`name#2` for a repeat): its identity in the queue. */
  step: string;
  /** Higher first among those waiting (a run's own slot: `runs.priority`); absent: 0. */
  priority?: number;
  /** A slot now or never (a run's singleton or rate-limit slot, src/domain/run-flow.ts): the
   *  ask rejects with SlotRefused instead of waiting in line. */
  noWait?: boolean;
  /** Called when the ask is not granted at once and goes in line, with the runs of its key
   *  holding or waiting before it, before the wait (a singleton in `cancel` mode cancels
   *  them); the line place is taken first, so two such asks in a burst see each other. */
  whenQueued?: (others: string[]) => Promise<void>;
}

export interface SlotHold {
  /** When the engine granted the slot (its clock, the time the rate limit counted): a
   *  queued step's first attempt is recorded as started then, not when it joined the line.
   *  Absent: granted at once, in the same turn (the fast path). */
  readonly grantedAt?: number;
  /** The body ended: the slot goes to the next waiter. Idempotent. */
  release(): void;
  /** The run ended: as release(), returning once the queue has taken the slot back, so an ask
   *  made after the run's end is seen (Restate: a call to the queue's object, not a send that
   *  may reach it after the next run's ask). Absent: release() already is. */
  releaseAwaited?(): Promise<void>;
}

export interface StepLog {
  readonly runId: string;
  readonly workflow: string;
  /** A fresh copy for this session: workflow code may mutate it. */
  readonly input: Json;
  /** The journal as this session found it, indexed by seq (a hole where a step was called
   *  but has nothing recorded, e.g. a body still running when a sibling finished, until the
   *  engine stopped). A log that journals as it goes
   *  (Restate) may know fewer positions than were recorded: the session then meets the
   *  rest through `open` and `attempt`, which return what was journaled. */
  readonly entries: readonly JournalEntry[];
  now(): number;
  /** When the run must end (its timeout, docs/control.md): the session delivers a
   *  TimeoutError where the code waits, as a cancel does, and the run then fails with it.
   *  Absent: no deadline. */
  readonly deadline?: number;
  /** now() moves only with journaled events (a replay sees the same times): a log served to a
   *  Deno child tells it, so the child's clock does not run on locally (docs/runner.md). */
  readonly journalClock?: boolean;
  /** Random source for ctx.random() first executions and retry jitter. */
  random(): number;
  /** A step not in `entries` begins at `call.seq`. Returns what the log had journaled at
   *  that position, or undefined where the log keeps no separate start record (SQLite). */
  open?(call: StepCall): Promise<Recorded> | undefined;
  /** Runs one attempt of a step body so its outcome counts once; `recorded` is the step the
   *  log found at that position when the outcome comes from an earlier execution. */
  attempt(call: StepCall, attempt: number, run: () => Promise<AttemptResult>, limits?: AttemptLimits): Promise<AttemptResult & { recorded?: Recorded }>;
  /** Calls a capability provider in the host process (step.use's body, run inside
   *  `attempt`): its result, or its error; CapabilityUnavailableError when no provider
   *  matches (the step parks). Absent: this log reaches no host (every use step parks). */
  capability?(req: CapabilityRequest, signal: AbortSignal): Promise<Json | undefined>;
  /** Flow control: resolves once the step may run its body in a slot of `req.queue` (held
   *  until release), rejects when `signal` aborts first (a cancel, the engine stopping).
   *  Absent: this backend has no queues, and a step naming one fails. */
  slot?(req: SlotRequest, signal: AbortSignal): Promise<SlotHold>;
  /** Flow control's fast path: a slot of `req.queue` at once, synchronously, when one is free
   *  and nobody waits for it; undefined: the step asks slot() (it waits, or fails naming the
   *  queue). Absent: every queued step asks slot(). */
  slotNow?(req: SlotRequest): SlotHold | undefined;
  /** A slot granted to an execution that ends without its outcome (its Deno child died)
   *  stays with the run: the log's retry replays the ask and takes the slot over (Restate:
   *  the slot is the invocation's). Absent: the child's server releases it. */
  readonly slotsOutliveSession?: boolean;
  /** The session now only waits for queue slots (RunSession.slotBound): a test engine's
   *  idle() looks again. Absent: nothing to tell. */
  slotBound?(): void;
  /** Calls fn once the engine's clock reads epoch ms `at` (a test engine's manual clock, which
   *  advance() moves); returns a cancel function. Absent: a real timer measures the time. */
  setTimer?(at: number, fn: () => void): () => void;
  /** A session that ends (its grace over, a race won elsewhere) gives up its steps' waits for
   *  queue slots: the log's queue forgets them (SQLite). Absent: they stay (Restate: a journaled
   *  release after the run's end would change its journal; the queue object's audit drops them). */
  readonly slotAsksEndWithSession?: boolean;
  /** Records (inserts or replaces) the entry at entry.seq. `resultText`: the JSON text of
   *  entry.result when the session already produced it (a log may store it as is instead of
   *  serialising the value a second time; it must equal JSON.stringify(entry.result)). */
  record(entry: JournalEntry, resultText?: string): Promise<void>;
  /** Offered by a log whose `attempt` calls `run` at once and adds nothing, and whose records
   *  commit in this process (SQLite): records as `record` does, then calls `durable` once the
   *  entry is durable or `failed` where `record`'s promise would reject, with no promise of
   *  its own. The session's path for a step body that returns a plain value (doNow in
   *  run-session.ts). */
  commitThen?(entry: JournalEntry, resultText: string | undefined, durable: () => void, failed: (err: unknown) => void): void;
  /** Consumes the oldest unconsumed signal named `signalName` and records `entry` with its
   *  payload as result, atomically; undefined when none is there. */
  takeSignal(signalName: string, entry: JournalEntry): Promise<{ payload: Json } | undefined>;
  /** Starts a child run linked to this run (step.start's body, docs/children.md): idempotent
   *  by `runId`; refuses (ValidationError) a cycle, a depth past the limit, or an id taken by
   *  a run that is not this step's child. Absent: child runs are not available here. */
  startChild?(req: ChildStartCall): Promise<{ runId: string; created: boolean }>;
  /** Sends a signal to another run (ctx.signal's body); absent: not available here. */
  sendSignal?(runId: string, name: string, payload: Json): Promise<void>;
  /** Records the emit entry and publishes the event, atomically (once). */
  emit(entry: JournalEntry, event: { name: string; payload: Json; id: string }): Promise<EmitRecorded | void>;
  /** The code returned at `position`. A log that journals as it goes returns what it had
   *  recorded there (a step, if the code now finishes early), else undefined. */
  close?(position: number): Promise<Recorded> | undefined;
  /** The engine is stopping, or the run's cancel is forced (a second cancel): start no
   *  further step, end now. */
  cancelRequested(): boolean;
  /** runs.pause was asked: the session starts no further step (a body running finishes and
   *  is recorded) and suspends once nothing is in flight (docs/control.md). */
  pauseRequested?(): boolean;
  /** Calls `listener` when runs.pause is asked (true) or withdrawn by a resume before it was
   *  applied (false) while this session runs, so a Deno child's server can push it to a
   *  child with no request in flight. One listener per session. Absent: the log tells only
   *  through pauseRequested (a Deno child then learns it from its next reply). */
  onPause?(listener: (paused: boolean) => void): void;
  /** Whether the run was asked to cancel: 'requested' (the session throws a CancelledError
   *  into the code at the steps it waits on, then lets cleanup steps run) or 'forced'. */
  cancelState?(): 'none' | 'requested' | 'forced';
  /** Calls `listener` when the run is cancelled or the engine stops while this session runs
   *  (the session aborts the step bodies in flight). One listener per session. */
  onCancel?(listener: (reason: Error) => void): void;
  /** A log whose journal order depends on when the code's reactions reach it (Restate: the
   *  order of its commands is checked on replay) waits on `gate` before it waits for its
   *  next outcome; a Deno child's server sets it (the child has reacted to all it was sent),
   *  undefined clears it. */
  settleWith?(gate: (() => Promise<void>) | undefined): void;
  /** A log that re-runs the code over an earlier process's journal (Restate replaying an
   *  invocation) says whether it still does: what the session meets then was already done
   *  and reported once (telemetry reports nothing of it). Absent: never. */
  replaying?(): boolean;
  /** The backend finished this entry between sessions (SQLite's wake claim records due
   *  sleeps): its outcome never reached the code, so what the code does after it, it does
   *  for the first time (ctx.log writes its lines). Absent: never. */
  completedOutside?(entry: JournalEntry): boolean;
}
