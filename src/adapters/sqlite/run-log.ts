// The SQLite backend's StepLog for one execution of a run: journal writes go through the
// commit queue (group commit, answered once durable), reads come from the journal the
// executor loaded. A class, not an object of closures: one is made per execution, and at
// 100 concurrent runs its ~15 closures (each with its context) lived as long as the run,
// outlived two scavenges and were promoted (docs/architecture.md, "Garbage on the step path").
import type { CapabilityRequest } from '../../domain/capability.ts';
import type { ErrorInfo } from '../../domain/errors.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import type { StepCall } from '../../domain/replay.ts';
import type { AttemptResult, ChildStartCall, SlotHold, SlotRequest, StepLog } from '../../ports/step-log.ts';
import { childRunId } from '../../domain/child-id.ts';
import type { ChildStartRequest } from '../../ports/executor.ts';
import type { CommitQueue } from './commit-queue.ts';
import { FaultCrash, type FaultPoints } from './fault-points.ts';
import type { SqliteStore } from './store.ts';

/** What the executor keeps of one run while it executes, shared with its log. */
export interface ActiveRun {
  /** requested: the session throws CancelledError into the code and lets cleanup run;
   *  forced (a second cancel): it ends now. */
  cancel: 'none' | 'requested' | 'forced';
  /** runs.pause asked (by whom): the session stops at its next step boundary. */
  pause?: string;
  /** Told when `pause` is asked or withdrawn while this execution runs (StepLog.onPause: a
   *  Deno child's server pushes it to a child that has no request in flight). */
  pauseListener?: (paused: boolean) => void;
  /** Something happened while executing (a signal): run again after this outcome. */
  again: boolean;
  /** A child ended while executing, and the run's replay is slow: run again after a hold
   *  (fan-in.ts) unless something else asks for `again`. */
  heldWake?: boolean;
  /** A journal write failed (disk full, lock held too long): the session is given up. */
  lose?: (err: unknown) => void;
  /** The session's abort of its step bodies in flight (a cancel, the engine stopping). */
  abort?: (reason: Error) => void;
  /** Every entry this run ever recorded, as committed (results as JSON text), indexed by seq,
   *  when the whole journal was written by this execution; lets the finished view skip a
   *  re-read. An array, not a Map: a Map that grows rehashes into new tables linked from the
   *  old one, kept alive past the run by an old-generation ActiveRun (src/runtime/churn-map.ts). */
  written?: WrittenEntry[];
  /** The execution's session while it runs: whether it only waits for queue slots (idle()). */
  session?: { readonly slotBound?: boolean };
}

/** A journal entry as committed: result and error as their JSON text (the workflow may
 *  mutate the objects it was handed). */
export type WrittenEntry = Omit<JournalEntry, 'result' | 'error'> & { resultText?: string; errorText?: string };

/** The executor's side of a run's log. */
export interface RunLogHost {
  readonly store: SqliteStore;
  readonly queue: CommitQueue;
  readonly faults: FaultPoints | undefined;
  readonly stopping: boolean;
  now(): number;
  random(): number;
  /** Calls a capability provider; absent when the engine has no capability registry. */
  readonly capability: ((req: CapabilityRequest, signal: AbortSignal) => Promise<Json | undefined>) | undefined;
  /** Restate's outbox, when this file is being drained to Restate: events go there. */
  readonly drain: { publish(event: EmittedEvent): Promise<unknown> } | undefined;
  /** Waits for a queue slot (src/runtime/queues.ts). */
  slot(req: SlotRequest, signal: AbortSignal): Promise<SlotHold>;
  /** A queue slot at once if one is free and nobody waits; undefined: ask slot(). */
  slotNow(req: SlotRequest): SlotHold | undefined;
  /** An execution now only waits for queue slots: idle() looks again. */
  slotBound(): void;
  /** A timer on the engine's clock (Clock.setTimer). */
  setTimer(at: number, fn: () => void): () => void;
  /** Inside a transaction: records the event once; the ids of the runs it created. */
  publish(event: EmittedEvent): string[];
  dispatch(runId: string): void;
  /** A child run with its link (executor.startChild). */
  startChild(req: ChildStartRequest): Promise<{ runId: string; created: boolean }>;
  /** A signal to another run (executor.signal). */
  signal(runId: string, name: string, payload: Json): Promise<void>;
}

type EmittedEvent = { name: string; payload: Json; id: string };

const never = () => new Promise<never>(() => {});

export class SqliteRunLog implements StepLog {
  readonly entries: JournalEntry[] = [];
  /** When the run must end (docs/control.md), set by the executor from the run's row. */
  deadline: number | undefined;
  /** When the executor's wake claim finished this run's due sleeps (their ended_at), if it
   *  did just before this execution: see completedOutside. */
  sleepsWokenAt: number | undefined;
  /** Present only when the host can reach providers (absent: every use step parks). */
  readonly capability?: (req: CapabilityRequest, signal: AbortSignal) => Promise<Json | undefined>;

  constructor(
    private readonly host: RunLogHost,
    readonly runId: string,
    readonly workflow: string,
    readonly input: Json,
    entries: readonly JournalEntry[],
    private readonly act: ActiveRun,
  ) {
    // Indexed by seq: steps called concurrently may be recorded past one still running.
    for (const e of entries) this.entries[e.seq] = e;
    act.written = entries.length === 0 ? [] : undefined;
    if (host.capability) this.capability = host.capability;
  }

  pauseRequested(): boolean {
    return this.act.pause !== undefined;
  }

  now(): number {
    return this.host.now();
  }

  startChild(req: ChildStartCall): Promise<{ runId: string; created: boolean }> {
    return this.host.startChild({ ...req, runId: req.runId ?? childRunId(this.runId, req.parent.step) });
  }

  sendSignal(runId: string, name: string, payload: Json): Promise<void> {
    return this.host.signal(runId, name, payload);
  }

  random(): number {
    return this.host.random();
  }

  /** In-process: the body runs here; its outcome counts once because record() follows. */
  attempt(_call: StepCall, _attempt: number, run: () => Promise<AttemptResult>): Promise<AttemptResult> {
    return run();
  }

  slot(req: SlotRequest, signal: AbortSignal): Promise<SlotHold> {
    return this.host.slot(req, signal);
  }

  slotBound(): void {
    this.host.slotBound();
  }

  readonly slotAsksEndWithSession = true;

  setTimer(at: number, fn: () => void): () => void {
    return this.host.setTimer(at, fn);
  }

  slotNow(req: SlotRequest): SlotHold | undefined {
    return this.host.slotNow(req);
  }

  record(entry: JournalEntry, resultText?: string): Promise<void> {
    const faults = this.host.faults;
    return faults ? this.aroundStepCommit(faults, () => this.commit(entry, resultText)) : this.commit(entry, resultText);
  }

  takeSignal(signalName: string, entry: JournalEntry): Promise<{ payload: Json } | undefined> {
    const { store } = this.host;
    return this.host.queue.enqueueOrLose(() => {
      const got = store.takeSignal(this.runId, signalName, entry.seq);
      if (got) {
        const taken: JournalEntry = Object.assign({}, entry, { result: got.payload });
        store.recordStep(this.runId, taken);
        this.wrote(taken);
      }
      return got;
    }, this.lost);
  }

  async emit(entry: JournalEntry, event: EmittedEvent): Promise<void> {
    const host = this.host;
    if (host.drain) {
      await this.durable(host.drain.publish(event));
      return this.commit(entry, undefined);
    }
    const created = await host.queue.enqueueOrLose(() => {
      host.store.recordStep(this.runId, entry);
      this.wrote(entry);
      if (host.faults?.hit('mid-emit')) throw new FaultCrash('mid-emit');
      return host.publish(event);
    }, this.lost);
    for (const id of created) host.dispatch(id);
  }

  /** A stopped (or crashed) engine starts no further step: the session ends at the next boundary. */
  completedOutside(entry: JournalEntry): boolean {
    return entry.kind === 'sleep' && this.sleepsWokenAt !== undefined && entry.endedAt === this.sleepsWokenAt;
  }

  cancelRequested(): boolean {
    return this.act.cancel === 'forced' || this.host.stopping;
  }

  cancelState(): ActiveRun['cancel'] {
    return this.act.cancel;
  }

  onCancel(listener: (reason: Error) => void): void {
    this.act.abort = listener;
  }

  onPause(listener: (paused: boolean) => void): void {
    this.act.pauseListener = listener;
  }

  private commit(entry: JournalEntry, text: string | undefined): Promise<void> {
    return this.host.queue.enqueueOrLose(() => this.storeStep(entry, text), this.lost);
  }

  commitThen(entry: JournalEntry, text: string | undefined, durable: () => void, failed: (err: unknown) => void): void {
    // Fault points (tests) wrap the write in promises: the same commit, through record().
    if (this.host.faults) return void this.record(entry, text).then(durable, failed);
    this.host.queue.enqueueThen(() => this.storeStep(entry, text), durable, this.lost);
  }

  private storeStep(entry: JournalEntry, text: string | undefined): void {
    this.host.store.recordStep(this.runId, entry, text);
    this.wrote(entry, text);
  }

  /** A journal write that fails is a storage failure, not a step failure: the workflow never
   *  sees it; the session is given up (the write never settles) and execute() learns. */
  private readonly lost = (err: unknown): void => this.act.lose?.(err);

  private durable<T>(p: Promise<T>): Promise<T> {
    return p.catch((err) => (this.lost(err), never()));
  }

  /** A snapshot of what was written (text, not the object: the workflow may mutate its copy).
   *  Key by key, not `{ ...meta }`: see run-session.ts on spreads that survive scavenges. */
  private wrote(entry: JournalEntry, resultText?: string): void {
    const written = this.act.written;
    if (!written) return;
    // Every field named, absent ones undefined: one shape with all of them in the object,
    // where keys added one by one overflowed into a second array (a PropertyArray per step,
    // live as long as the run).
    written[entry.seq] = {
      seq: entry.seq, name: entry.name, kind: entry.kind, status: entry.status, attempts: entry.attempts,
      startedAt: entry.startedAt, endedAt: entry.endedAt, wakeAt: entry.wakeAt, nextRetryAt: entry.nextRetryAt,
      retryLimit: entry.retryLimit, order: entry.order,
      resultText: entry.result === undefined ? undefined : (resultText ?? JSON.stringify(entry.result)),
      errorText: entry.error === undefined ? undefined : JSON.stringify(entry.error as ErrorInfo),
    };
  }

  /** Test-only: the step-commit fault points around one journal write. */
  private async aroundStepCommit(faults: FaultPoints, write: () => Promise<void>): Promise<void> {
    const before = faults.hit('before-step-commit');
    if (before) await before;
    await write();
    const after = faults.hit('after-step-commit');
    if (after) await after;
  }
}
