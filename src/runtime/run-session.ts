// One execution of a run, the ONE replay engine of every backend: calls the workflow
// function with a StepApi backed by the run's step log (SQLite in-process, the Restate
// handler, a Deno child). Each step call asks the pure decide() what to do; recorded steps
// replay, the first unrecorded one executes. The session ends with a RunOutcome the moment
// the run finishes, fails or is cancelled, or suspends: when every branch of the workflow
// code is blocked (a sleep or retry not due, a wait with no signal) and nothing is in flight;
// workflow code still awaiting then is left on a promise that never settles (so a user's
// try/catch cannot swallow a suspension).
import {
  RunStateError,
  CancelledError, NonDeterminismError, TerminalError, TimeoutError, ValidationError, fromErrorInfo, toErrorInfo, type ErrorInfo,
} from '../domain/errors.ts';
import { DEFAULT_CANCEL_GRACE_MS } from '../domain/cancel.ts';
import type { JournalEntry } from '../domain/journal.ts';
import { DEFAULT_MAX_PAYLOAD_BYTES, oversize, roundTrip, type Json } from '../domain/json.ts';
import { decodeValue, encodeStreamed, encodeValue, streamedParts } from '../domain/value-codec.ts';
import { decide, decideFinish, decideRecorded, type Decision, type StepCall } from '../domain/replay.ts';
import { decideRetry } from '../domain/retry-policy.ts';
import type { StepKind } from '../domain/run-view.ts';
import { StepNamer, idempotencyKey as idempotencyKeyOf } from '../domain/step-names.ts';
import { BOUNDED_BODY, type AttemptResult, type Recorded, type SlotHold, type StepLog } from '../ports/step-log.ts';
import type { AttemptTrace, ExecutionTrace, RunEventName, RunTelemetry } from '../ports/telemetry.ts';
import { resolveStepOptions, type NormalizedStepOptions } from '../../sdk/step-options.ts';
import { AttemptInfo, type StepLoggers } from './attempt-info.ts';
import type { BodyStreamHost } from './body-streams.ts';
import { NO_LOG, RunLogger } from './run-log.ts';
import type { RunLogOutput } from '../ports/run-log.ts';
import { Links, type Link } from './links.ts';
import type { EmitOptions, StepApi, StepBody, StepOptions, StreamWriter, WorkflowContext, WorkflowFn, WorkflowLogger } from '../../sdk/types.ts';
import type { RunOutcome } from './run-outcome.ts';
import { CompletionOrder } from './completion-order.ts';
import { capabilityBody, isPark } from './capability-call.ts';
import { stepApi } from './step-api.ts';
import { signalStep, withChildSteps } from './child-steps.ts';
import { queuedAttempt } from './queues.ts';
import { withTimeout } from './with-timeout.ts';
import { setLongTimeout } from './long-timer.ts';
import { deadlineError, isDeadlineError } from '../domain/run-control.ts';
import { checkStateKey, chunksOf, publishStepName, streamOffset, streamStepName } from '../domain/published-state.ts';
import { emitStepEvent, type StepEvent, type StepEventSink, type StepEventType } from './step-events.ts';

/** A promise that never settles. Fresh per call: a shared one would keep every awaiting
 *  continuation (and the run state it closes over) reachable forever. */
const never = <T = never>(): Promise<T> => new Promise<T>(() => {});

class Finished extends Error {}


/** A step call whose promise has not settled yet: a cancel rejects it with CancelledError. */
interface PendingStep {
  call?: StepCall;
  /** Hands back a recorded outcome: a cancel leaves it alone. */
  replay?: boolean;
  attempts?: number;
  /** Rejected by a cancel: what its call still does is ignored (never recorded). */
  cancelled: boolean;
  /** Its outcome is recorded (or being recorded): a cancel does not rewrite it. */
  settled?: boolean;
  /** A wait looking for its signal: a cancel reaches it once the look ends empty. */
  looking?: boolean;
  /** A wait left open in this session, holding later waits of this signal name back. */
  openOn?: string;
  reject(err: Error): void;
}


/** What a step's result is called in encodeValue's errors (built only when it throws). */
const stepResult = (name: string): string => `result of step '${name}'`;

type Started = { call: StepCall; decision: Decision };

/** An attempt doNow began, handed to doStep for the rest. */
interface Begun {
  call: StepCall;
  attempt: number;
  startedAt: number;
  opts: NormalizedStepOptions;
  ran: Promise<AttemptResult>;
}

/** A step that cannot go on until time passes or a signal arrives. */
interface Blocked {
  status: 'sleeping' | 'waiting' | 'retrying' | 'parked';
  wakeAt?: number;
  /** New entry to record with the suspension (absent: already recorded). */
  entry?: JournalEntry;
  signal?: string;
}

/** Engine settings every session applies (config maxPayloadBytes, cancelGrace). */
export interface SessionLimits {
  maxPayloadBytes?: number;
  cancelGraceMs?: number;
  /** Spans and metrics of this execution (docs/observability.md); absent: none. */
  telemetry?: RunTelemetry;
  /** The trace context stored with the run (a W3C traceparent): this execution's parent. */
  traceparent?: string;
  /** Where ctx.log and step bodies' lines go (config `log.runs`); absent: nowhere. */
  runLog?: RunLogOutput;
  /** Per-step events (src/runtime/step-events.ts); absent: none. */
  events?: StepEventSink;
}

export class RunSession implements StepLoggers, BodyStreamHost {
  private seq = 0;
  private readonly namer = new StepNamer();
  private outcome: RunOutcome | undefined;
  private settle!: (o: RunOutcome) => void;
  private readonly done = new Promise<RunOutcome>((r) => (this.settle = r));
  private pendingWrites: Promise<void>[] = [];
  /** Bodies inside their synchronous part: a step call made there is rejected (steps cannot
   *  nest). Only the synchronous part, so a concurrent branch may call steps while another
   *  branch's body awaits. A call after an await inside a body is not caught: an async
   *  context (AsyncLocalStorage) would catch it, but on Node 20 it turns on promise hooks for
   *  the whole host process, measured ~10-20% off the step and timer benchmarks. */
  private inBodySync = 0;
  /** Step-log operations and bodies under way; the run is quiescent only at zero. */
  private inflight = 0;
  /** Of `inflight`, the waits for a queue slot (queued): at equality the session moves only
   *  when another body ends or a rate window opens (slotBound). */
  private slotWaits = 0;
  /** Bumped by every step call and every finished operation: a quiescence check that sees
   *  it unchanged knows no branch moved in between. */
  private activity = 0;
  /** A look for quiescence is scheduled (checkQuiescent): at most one at a time. */
  private quietLook = false;
  private readonly blocked: Blocked[] = [];
  private drainWaiters: (() => void)[] = [];
  /** Per signal name: waits that looked and found nothing in this session (they keep their
   *  place: a later wait of the name does not look past them). This and lookTail are made by
   *  the first wait: an empty Map lived (and was copied by every scavenge) with each run. */
  private waitingOn: Map<string, number> | undefined;
  /** Per signal name: the look of the wait called last (the next one looks after it). */
  private lookTail: Map<string, Promise<void>> | undefined;
  /** The workflow function returned or threw: the session only drains and finishes. */
  private returned = false;
  private returnedAt?: { promise: Promise<void>; resolve: () => void };
  /** The cancel grace bounds the cleanup of a cancel the code got before it returned. One
   *  delivered after the return (to steps it never awaited) leaves the run's outcome to the
   *  code, whatever the clock says: with the grace, a later execution whose clock was past
   *  it (a restart after a crash before the outcome's commit, seed 6042356) ended `cancelled`
   *  a run the code had finished, and a replay could not tell which the execution chose. */
  private graceBounds = true;
  /** Step calls whose promise has not settled yet (to tell concurrent code apart). */
  private unsettled = 0;
  /** Of those, doNow's handed back in this turn of the event loop: uncounted at its end. */
  private uncountAtTurnEnd = 0;
  /** In call order (links, not a table: see src/runtime/links.ts). */
  private readonly pendingSteps = new Links<PendingStep>();
  /** Results reach the code in completion order (src/runtime/completion-order.ts). */
  private readonly order: CompletionOrder;
  /** A cancel: 'pending' until a CancelledError is thrown into the steps the code waits on
   *  ('delivered'); from then on new steps run (cleanup) and the run ends `cancelled`. */
  private cancelPhase: 'none' | 'pending' | 'delivered' = 'none';
  private deliveredAt = 0;
  /** Steps at positions below it were called before the cancel was delivered. */
  private cancelSeq = Infinity;
  /** A CancelledError was handed to one of the code's step calls before the workflow
   *  function returned or threw: only then does the run end `cancelled` (a replay hands the
   *  recorded ones back in the same completion order, so it decides the same). */
  private cancelReachedCode = false;
  private graceTimer: (() => void) | undefined;
  /** What the delivered stop is: a cancel (the run ends `cancelled`) or the run's deadline
   *  (docs/control.md: a TimeoutError delivered the same way; the run ends `failed` with it). */
  private stopCause: 'cancel' | 'deadline' = 'cancel';
  private deadlineTimer: (() => void) | undefined;
  /** One per step body attempt in flight: aborted on its timeout, a cancel, an engine stop. */
  private readonly aborts = new Links<AttemptInfo>();
  /** Of `aborts`, the waits for a queue slot: given up when the session ends (a grace's end,
   *  a race won elsewhere), or once granted they held their slot for good. */
  private readonly slotAsks = new Links<AttemptInfo>();
  /** This execution's spans and metrics; undefined when nobody listens (no SDK). */
  private trace: ExecutionTrace | undefined;
  /** The run had nothing journaled when this session began (its first execution). */
  private firstExecution = false;
  /** This session did something new (an attempt, a suspension): a session that only
   *  replayed what an earlier process did (Restate replaying an invocation) reports nothing. */
  private traced = false;
  /** The code has run past what earlier sessions ran (it got a value none recorded before
   *  this session: a new step outcome, a new ctx.now()): ctx.log writes from here on. A run
   *  with nothing journaled runs its code for the first time from the start. */
  private fresh: boolean;
  /** Positions whose body began an attempt in this session (step events): only their
   *  outcomes are reported, never one a replay of an earlier process hands back. */
  private readonly ranHere: Set<number> | undefined;
  /** Streams this code closed (ctx.stream(name).close()), made by the first stream. */
  private closedStreams: Set<string> | undefined;
  /** Per stream, the chunks committed so far (replayed or recorded in this session): the
   *  offset of the next one, which its `stream.chunk` event carries. Made by the first chunk. */
  private streamCounts: Map<string, number> | undefined;

  constructor(
    private readonly log: StepLog,
    private readonly fn: WorkflowFn,
    private readonly stepDefaults?: StepOptions,
    private readonly options: SessionLimits = {},
  ) {
    this.fresh = log.entries.length === 0;
    if (options.events) this.ranHere = new Set();
    this.order = new CompletionOrder(
      log.entries.flatMap((e) => [e?.order]),
      {
        unsettled: () => this.unsettled,
        moved: () => void this.activity++,
        held: () => this.checkQuiescent(),
        turnEnded: () => {
          this.unsettled -= this.uncountAtTurnEnd;
          this.uncountAtTurnEnd = 0;
        },
        position: () => this.seq,
      },
    );
    // A cancel delivered in an earlier session is in the journal (steps failed with
    // CancelledError); one requested since is delivered where the code now waits.
    const delivered = log.entries.filter((e) => e?.error?.name === 'CancelledError' || isDeadlineError(e?.error));
    if (delivered.length > 0) {
      if (delivered.some((e) => isDeadlineError(e.error))) this.stopCause = 'deadline';
      this.cancelPhase = 'delivered';
      this.deliveredAt = Math.min(...delivered.map((e) => e.endedAt ?? log.now()));
      // Steps after the last one the cancel reached were called after it: cleanup, which a
      // cancel does not reach (a cleanup wait that looks in vain waits, as it did then).
      this.cancelSeq = Math.max(...delivered.map((e) => e.seq)) + 1;
      this.graceBounds = delivered.some((e) => e.error?.fields?.afterReturn !== true);
    } else if (log.cancelState?.() === 'requested') this.cancelPhase = 'pending';
    else if (log.deadline !== undefined && log.now() >= log.deadline) this.deadlinePassed();
  }

  /** The run's deadline passed: like a requested cancel, with a TimeoutError (delivered where
   *  the code waits, cleanup runs); bodies in flight are told to stop. */
  private deadlinePassed(): void {
    this.stopCause = 'deadline';
    this.cancelPhase = 'pending';
    for (const ac of this.aborts.values()) ac.abort(fromErrorInfo(deadlineError(this.log.deadline!)));
  }

  /** How a delivered stop ends the run once its cleanup is done (or its grace is over). */
  private stopped(): RunOutcome {
    return this.stopCause === 'deadline' ? { type: 'failed', error: deadlineError(this.log.deadline!) } : { type: 'cancelled' };
  }

  /** One limit for every payload the run produces (step results, output, emitted events). */
  get maxPayloadBytes(): number {
    return this.options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  }

  /** A cancel was thrown into the code (in this session or an earlier one). */
  get cancelDelivered(): boolean {
    return this.cancelPhase === 'delivered';
  }

  /** Runs the workflow until it finishes, fails, suspends or is cancelled. */
  run(): Promise<RunOutcome> {
    this.log.onCancel?.((reason) => {
      for (const ac of this.aborts.values()) ac.abort(reason);
      this.cancelArrived();
    });
    const telemetry = this.options.telemetry;
    if (telemetry) {
      this.trace = telemetry.execution(this.log.runId, this.log.workflow, this.options.traceparent);
      this.firstExecution = this.log.entries.length === 0;
    }
    if (this.cancelPhase === 'delivered' && this.graceBounds && this.armGrace() === 'over') {
      // The cleanup's grace ran out while the run was not executing (the engine was down):
      // the run ends cancelled before its code starts. Started, the code would replay up to
      // where the ended session refuses its calls, and a concurrent branch could go on to
      // call steps the journal never holds (simulation seed 6030860).
      this.finish(this.stopped());
      return this.done;
    }
    // A log whose clock is real time (not journaled: replays do not depend on it) gets the
    // deadline in the middle of a step body too; a journaled clock meets it at step boundaries
    // and wakes (the suspension wakes at the deadline at the latest).
    const deadline = this.log.deadline;
    if (deadline !== undefined && this.cancelPhase === 'none' && !this.log.journalClock) {
      this.deadlineTimer = setLongTimeout(() => {
        if (this.outcome || this.cancelPhase !== 'none') return;
        this.deadlinePassed();
        this.deliverCancel();
      }, deadline - this.log.now(), { unref: true });
    }
    const step = this.stepApi();
    const ctx = this.context(step);
    void (async () => {
      try {
        const output = await this.fn({ input: decodeValue(this.log.input), step, ctx });
        this.markReturned();
        const cancelled = this.cancelReachedCode;
        if (this.outcome) return;
        // A step the code started but did not await (a race's loser, a `void step.do`)
        // still runs once and is recorded before the run ends.
        await this.settledAll();
        if (this.outcome) return;
        await this.cancelAtFinish();
        if (this.outcome) return;
        await this.flushPending();
        const fin = decideFinish(this.log.entries, this.seq);
        if (fin.type === 'diverged') return this.diverged(fin);
        const closed = this.log.close?.(this.seq);
        if (closed && !this.checkRecorded({ seq: this.seq, kind: 'end', name: '' }, await this.io(closed))) return;
        if (this.outcome) return;
        if (this.log.cancelRequested()) return this.finish({ type: 'cancelled' });
        if (cancelled) return this.finish(this.stopped());
        let out: Json;
        try {
          out = encodeValue(output, `workflow '${this.log.workflow}' output`, this.maxPayloadBytes).stored;
        } catch (err) {
          return this.finish({ type: 'failed', error: toErrorInfo(err) });
        }
        this.finish({ type: 'succeeded', output: out });
      } catch (err) {
        this.markReturned();
        const cancelled = this.cancelReachedCode;
        if (this.outcome || err instanceof Finished) return;
        // Steps still running (a Promise.all that rejected early) end and are recorded
        // first, so a retry replays them instead of running their bodies again.
        await this.settledAll();
        if (this.outcome) return;
        await this.cancelAtFinish();
        if (this.outcome) return;
        await this.flushPending().catch(() => {});
        // Cancelled: whatever the code threw after its cleanup, the run ends cancelled.
        if (cancelled) return this.finish(this.stopped());
        this.finish({ type: 'failed', error: toErrorInfo(err) });
      }
    })();
    return this.done;
  }

  private markReturned(): void {
    this.returned = true;
    this.returnedAt?.resolve();
  }

  private finish(o: RunOutcome): void {
    if (this.outcome) return;
    this.outcome = o;
    this.graceTimer?.();
    if (this.slotWaits > 0 && this.log.slotAsksEndWithSession) for (const a of this.slotAsks.values()) a.abort(new RunStateError(`run ${this.log.runId} ended while a step waited for a queue slot`));
    if (this.trace) this.endTrace(this.trace, o);
    this.deadlineTimer?.();
    this.settle(o);
  }

  private endTrace(t: ExecutionTrace, o: RunOutcome): void {
    this.trace = undefined;
    if (!this.traced && this.log.replaying?.()) return t.drop();
    t.end(o.type === 'suspended' ? { type: 'suspended', status: o.status, wakeAt: o.wakeAt } : { type: o.type, error: o.type === 'failed' ? o.error : undefined }, this.firstExecution);
  }

  /** An event on this execution's span; none while the log replays an earlier process's work. */
  private traceEvent(name: RunEventName, step: string, at?: number): void {
    if (this.trace === undefined || this.log.replaying?.()) return;
    this.traced = true;
    this.trace.event(name, step, at);
  }

  /** A step body's attempt begins for real (never for a replayed step: its body is not run). */
  private traceAttempt(call: StepCall, attempt: number, key: string): AttemptTrace | undefined {
    this.traced = true;
    return this.trace!.attempt(call.name, call.kind, attempt, key);
  }

  /** A step event, unless nobody follows this run or the log replays an earlier process's
   *  work (Restate replaying an invocation: that process reported it). */
  private stepEvent(type: StepEventType, step: { name: string; kind: StepKind }, extra?: Partial<StepEvent>): void {
    emitStepEvent(this.options.events, this.log, type, step, extra);
  }

  /** A step body's attempt begins for real here: `step.started`, and its outcome is reported. */
  private attemptBegan(call: StepCall, attempt: number): void {
    this.ranHere!.add(call.seq);
    this.stepEvent('step.started', call, { attempt });
  }

  /** The outcome of an attempt whose body ran in this session (none for a replayed one). */
  private attemptEnded(type: StepEventType, call: StepCall, attempt: number, extra?: Partial<StepEvent>): void {
    if (!this.ranHere!.delete(call.seq)) return;
    this.stepEvent(type, call, Object.assign({ attempt }, extra));
  }

  /** The run was asked to cancel while this session runs. */
  private cancelArrived(): void {
    if (this.outcome) return;
    const state = this.log.cancelState?.() ?? 'none';
    if (state === 'forced') return this.finish({ type: 'cancelled' });
    if (state !== 'requested' || this.cancelPhase !== 'none') return;
    this.cancelPhase = 'pending';
    // Nothing waits right now (the code is between steps): it gets the error at its next
    // step that would wait or run, when the run next has nothing else to do.
    this.deliverCancel();
  }

  /** Throws a CancelledError into every step the code waits on (a sleep, a wait, a retry
   *  backoff, a body in flight), recording each as failed with it so a replay throws it at
   *  the same places. From here on new steps run: they are the code's cleanup. */
  private deliverCancel(): boolean {
    // However it arrives (the cancel's own listener, the idle check, cancelAtFinish), a
    // cancel delivered once the function returned is an after-return one: the journal must
    // say so, or a replay throws it into the code before the return (seed 6114627).
    const afterReturn = this.returned;
    const targets = this.pendingSteps.values().filter((p) => p.call && !p.replay && !p.cancelled && !p.settled && !p.looking);
    if (targets.length === 0) return false;
    this.cancelPhase = 'delivered';
    this.deliveredAt = this.log.now();
    this.cancelSeq = this.seq;
    this.traceEvent('cancel', targets[0]!.call!.name);
    this.graceBounds = !afterReturn;
    if (this.graceBounds) this.armGrace();
    // Every blocked branch is among the targets: nothing of theirs waits any more.
    this.blocked.length = 0;
    this.cancelTargets(targets, afterReturn);
    return true;
  }

  /** Records each target failed with CancelledError, then rejects it into the code. */
  private cancelTargets(targets: PendingStep[], afterReturn = false): void {
    const info = this.stopCause === 'deadline' ? deadlineError(this.log.deadline!) : toErrorInfo(new CancelledError(`run ${this.log.runId} was cancelled`));
    // Delivered after the function returned (cancelAtFinish): said in the journal, so a
    // replay hands it back after the return too and decides the run's end the same.
    if (afterReturn) info.fields = { ...info.fields, afterReturn: true };
    const orders: number[] = [];
    const writes = targets.map((p) => {
      p.cancelled = true;
      // A cancelled wait is no longer open: a later wait of its name (cleanup) may look.
      if (p.openOn !== undefined) this.waitingOn!.set(p.openOn, this.waitingOn!.get(p.openOn)! - 1);
      p.openOn = undefined;
      const c = p.call!;
      const order = this.order.next();
      orders.push(order);
      return this.log.record({
        seq: c.seq, name: c.name, kind: c.kind, status: 'failed', attempts: Math.max(1, p.attempts ?? 1), error: info, endedAt: this.deliveredAt, order,
      });
    });
    // Like any step outcome, the code sees the cancel only once it is durable (a crash
    // before that leaves no trace the code acted on), and in its completion order, through
    // the gate as a replay hands it back: a rejection that went at once overtook results
    // still held for their turn (a replay's recorded ones), so the code called its next
    // steps in another order than the execution that recorded them (seeds 943373, 922488).
    void this.io(Promise.all(writes)).then(() => {
      targets.forEach((p, i) => {
        const turn = this.order.gate(orders[i], p.call!.seq);
        if (turn) void turn.then(() => this.rejectCancelled(p, info));
        else this.rejectCancelled(p, info);
      });
    });
    this.activity++;
  }

  /** The code returned (or threw) before a pending cancel reached it: the run keeps that
   *  outcome, but the steps still waiting (race losers, and the steps the pending cancel
   *  held from running) get the cancel now, as at any quiescence, and are recorded failed
   *  with CancelledError: every step the code called ends with an outcome in the journal
   *  (simulation seed 3101857: a held loser `fetch` was left with nothing recorded). Code
   *  that reacts to them (a loser's catch) runs its cleanup steps before the run ends. */
  private async cancelAtFinish(): Promise<void> {
    if (this.cancelPhase !== 'pending' || !this.deliverCancel()) return;
    await this.settledAll();
  }

  private rejectCancelled(p: PendingStep, info: ErrorInfo): void {
    if (!this.returned) this.cancelReachedCode = true;
    p.reject(fromErrorInfo(info));
  }

  /** Cleanup that outlives the grace bound ends the run anyway. 'over': no grace is left. */
  private armGrace(): 'armed' | 'over' | undefined {
    if (this.graceTimer || this.outcome) return undefined;
    const grace = this.options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    // At most the whole grace: a clock that reads earlier than the delivery it recorded (a
    // step back, or a log whose clock is not the one that recorded it) never lengthens it.
    const left = Math.min(grace, this.deliveredAt + grace - this.log.now());
    if (left <= 0) {
      queueMicrotask(() => this.finish(this.stopped()));
      return 'over';
    }
    // On the engine's clock where the log offers it: a cleanup that only waits for a queue slot
    // never suspends, so on a test engine's manual clock a real timer left it running past
    // the grace for good (sim seeds 908, 1632). Else any configured grace: a plain setTimeout
    // past 24.8 days ended cleanup after 1 ms.
    const end = () => this.finish(this.stopped());
    this.graceTimer = this.log.setTimer ? this.log.setTimer(this.log.now() + left, end) : setLongTimeout(end, left, { unref: true });
    return 'armed';
  }

  private diverged(d: { position: number; expected: string; recorded: string }): void {
    const err = new NonDeterminismError(this.log.runId, d.position, d.expected, d.recorded);
    this.finish({ type: 'failed', error: toErrorInfo(err) });
  }

  /** Common entry of every step call: boundary checks, naming, and the replay decision. */
  private begin(kind: StepKind, rawName: string): { call: StepCall; decision: Decision } | undefined {
    if (this.outcome) return undefined;
    if (this.inBodySync > 0) {
      throw new ValidationError(`step.${kind === 'do' ? 'do' : kind}('${String(rawName)}') called inside a step.do body: steps cannot nest`);
    }
    const name = this.namer.next(rawName);
    if (this.log.cancelRequested()) {
      this.finish({ type: 'cancelled' });
      return undefined;
    }
    // Paused (runs.pause): no step starts; the run suspends once what is in flight is recorded.
    if (kind !== 'now' && kind !== 'random' && this.cancelPhase === 'none' && this.log.pauseRequested?.()) {
      void this.block({ status: 'sleeping' });
      return undefined;
    }
    // The deadline met at a step boundary: this step waits for it to be delivered.
    if (this.cancelPhase === 'none' && this.log.deadline !== undefined && this.log.now() >= this.log.deadline) this.deadlinePassed();
    const call: StepCall = { seq: this.seq++, kind, name };
    this.activity++;
    const decision = decide(this.log.entries, call, this.log.now());
    if (decision.type === 'diverged') {
      this.diverged(decision);
      return undefined;
    }
    return { call, decision };
  }

  private async flushPending(): Promise<void> {
    const writes = this.pendingWrites;
    if (writes.length === 0) return;
    this.pendingWrites = [];
    await this.io(Promise.all(writes));
  }

  private stepApi(): StepApi {
    return withChildSteps(stepApi({
      do: (name, options, body) => (this.log.commitThen ? this.doNow(name, options, body) : this.stepCall((p) => this.doStep(p, name, options, body))),
      sleep: (name, wakeAtFrom) => this.stepCall((p) => this.sleepStep(p, name, wakeAtFrom)),
      wait: (name, timeoutMs) => this.stepCall((p) => this.waitStep(p, name, timeoutMs)),
      use: (cap, input, affinity, options) => {
        let data: Json;
        try {
          data = roundTrip(input, `step.use('${cap}') input`, this.maxPayloadBytes) as Json;
        } catch (err) {
          return Promise.reject(new ValidationError((err as Error).message));
        }
        return this.stepCall((p) => this.doStep(p, cap, options, capabilityBody(this.log, cap, data, affinity), 'use'));
      },
    }), this.log);
  }

  private context(step: StepApi): WorkflowContext {
    const self = this;
    return {
      runId: this.log.runId,
      workflow: this.log.workflow,
      now: () => self.journaledValue('now', 'ctx.now', () => self.log.now()),
      random: () => self.journaledValue('random', 'ctx.random', () => self.log.random()),
      emit: (name: string, payload?: unknown, options?: EmitOptions) => self.emitStep(name, payload ?? null, options),
      publish: (key: string, value?: unknown) => self.publishStep(key, value ?? null),
      stream: (name: string) => self.streamWriter(name),
      signal: signalStep(step, this.log),
      log: this.options.runLog ? new RunLogger(this.options.runLog, this.log.runId, this.log.workflow, { replaying: () => this.linesReplayed(), ids: () => this.trace?.ids?.() }) : NO_LOG,
    };
  }

  /** The code writing a ctx.log line now ran (and wrote it) in an earlier session: it has
   *  been handed only recorded values so far, or the log replays an earlier process's work
   *  (Restate replaying the invocation's journal). */
  private linesReplayed(): boolean {
    return !(this.fresh || this.order.deliveredNew) || this.log.replaying?.() === true;
  }

  /** A step body's logger (AttemptInfo.log): its lines are never replays (a replayed step's
   *  body does not run), tagged with the step, the attempt and the attempt span's ids. */
  stepLogger(step: string, attempt: number, at: AttemptTrace | undefined): WorkflowLogger {
    return new RunLogger(this.options.runLog!, this.log.runId, this.log.workflow, at?.ids ? { ids: () => at.ids!() } : {}, step, attempt);
  }

  /** ctx.now()/ctx.random() are synchronous: the value is returned at once and its entry
   *  is written in the background, flushed before any step body runs or the run ends. */
  private journaledValue(kind: 'now' | 'random', name: string, produce: () => number): number {
    const started = this.begin(kind, name);
    if (!started) throw new Finished('run finished');
    const { call, decision } = started;
    if (decision.type === 'replay') return decision.entry.result as number;
    const value = produce();
    this.fresh = true;
    const t = this.log.now();
    const write = this.log.record({ seq: call.seq, name: call.name, kind, status: 'succeeded', attempts: 1, result: value, startedAt: t, endedAt: t });
    write.catch(() => {});
    this.pendingWrites.push(write);
    return value;
  }

  /** Awaits a step-log operation. A log that fails under the session (Restate cancelling
   *  the invocation, a transport error) ends it: cancelled when a cancel was requested,
   *  else interrupted; workflow code never sees the error, so it cannot swallow it. */
  private io<T>(p: Promise<T>): Promise<T> {
    this.inflight++;
    return p.then(this.ioDone as (v: T) => T, this.ioFailed as (cause: unknown) => Promise<T>);
  }

  // io()'s callbacks, made once per session rather than twice per step-log operation.
  private readonly ioDone = <T>(v: T): T => (this.settled(), v);

  private readonly ioFailed = <T>(cause: unknown): Promise<T> => {
    this.settled();
    if (cause instanceof CancelledError && this.log.cancelState?.() === 'requested') {
      // The log (Restate) gave up what the invocation awaited because of a cancel: the
      // step that waited on it gets the CancelledError (delivered once, to every target).
      this.cancelArrived();
      if (this.cancelPhase === 'delivered' || this.outcome) return never<T>();
    }
    this.finish(this.log.cancelRequested() || cause instanceof CancelledError ? { type: 'cancelled' } : { type: 'interrupted', cause });
    return never<T>();
  };

  private settled(): void {
    this.inflight--;
    this.activity++;
    if (this.inflight > 0) {
      if (this.inflight === this.slotWaits) this.log.slotBound?.();
      return;
    }
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
    this.checkQuiescent();
  }

  private drained(): Promise<void> {
    return this.inflight === 0 ? Promise.resolve() : new Promise((r) => this.drainWaiters.push(r));
  }

  /** Nothing in flight, and a full turn passed without a step call or a finished operation:
   *  a losing branch that calls its next step after a sibling ended is waited for too. */
  private async settledAll(): Promise<void> {
    for (;;) {
      await this.drained();
      const seen = this.activity;
      await new Promise<void>((r) => setImmediate(r));
      if (this.outcome || (this.inflight === 0 && this.activity === seen)) return;
    }
  }

  /** A step that can only go on once time passes or a signal arrives: the run suspends when
   *  every branch is like it. Its promise never settles in this session. */
  private block(b: Blocked): Promise<never> {
    this.blocked.push(b);
    this.checkQuiescent();
    return never();
  }

  /** Suspends once nothing is in flight and a full turn of the event loop (every microtask
   *  of the workflow code) passed without a step call or a finished operation. */
  private checkQuiescent(): void {
    // Once the workflow function returned, the run finishes (its blocked losers stay open).
    if (this.outcome || this.returned || this.inflight > 0 || (this.blocked.length === 0 && this.order.heldCount === 0)) return;
    // One look at a time: a fan-out of n blocked calls scheduled n looks, each re-scheduling
    // while the others' calls kept `activity` moving, ~n^2 turns (a parent of 1,000 children).
    if (this.quietLook) return;
    this.quietLook = true;
    const seen = this.activity;
    setImmediate(() => {
      this.quietLook = false;
      if (this.outcome || this.returned || this.inflight > 0) return;
      // Something moved (a result handed back, a call): look again once it settles.
      if (this.activity !== seen) return this.checkQuiescent();
      if (this.order.heldCount > 0) {
        this.order.skipHead();
        return this.checkQuiescent();
      }
      if (this.cancelPhase === 'pending' && this.deliverCancel()) return;
      // Not stopped yet: it wakes at its deadline at the latest.
      const grace = this.deliveredAt + (this.options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS);
      const bound = this.cancelPhase === 'delivered' ? (this.graceBounds ? grace : undefined) : this.cancelPhase === 'none' ? this.log.deadline : undefined;
      this.finish(suspension(this.blocked, bound));
    });
  }



  /** A step call, counted as pending until its promise settles; a cancel may reject it. */
  private stepCall<T>(run: (p: PendingStep) => Promise<T>): Promise<T> {
    this.unsettled++;
    let resolve!: (v: unknown) => void;
    const p: PendingStep = { cancelled: false, reject: undefined as unknown as PendingStep['reject'] };
    const promise = new Promise<T>((res, rej) => ((resolve = res as (v: unknown) => void), (p.reject = rej)));
    return this.follow(p, this.pendingSteps.add(p), resolve, promise, run(p));
  }


  /** step.do on a log that commits in place (commitThen: SQLite in-process). A body that
   *  returns a plain value has its outcome recorded and handed back through callbacks, with
   *  none of doStep's async frame, awaits and promise wrappers: they were most of a step's
   *  garbage, and the young generation's scavenges are the host's longest event-loop turns
   *  (docs/architecture.md, "Garbage on the step path"). Every other case (a replay, a
   *  suspension, a pending cancel, a timeout, a body that returns a promise or fails) goes
   *  on in doStep from the point it reached, so both paths make the same decisions. */
  private doNow(rawName: string, options: StepOptions | undefined, body: StepBody<unknown>): Promise<unknown> {
    let started: Started | undefined;
    try {
      started = this.begin('do', rawName);
    } catch (err) {
      return Promise.reject(err);
    }
    // As doStep: a finished run's calls never settle.
    if (!started) return never();
    const { call, decision } = started;
    this.unsettled++;
    let resolve!: (v: unknown) => void;
    const p: PendingStep = { call, cancelled: false, reject: undefined as unknown as PendingStep['reject'] };
    const promise = new Promise<unknown>((res, rej) => ((resolve = res), (p.reject = rej)));
    const link = this.pendingSteps.add(p);
    let opts: NormalizedStepOptions | undefined;
    if (decision.type === 'execute' && this.cancelPhase !== 'pending' && this.pendingWrites.length === 0 && !this.outcome && !this.log.cancelRequested()) {
      try {
        opts = resolveStepOptions(call.name, this.stepDefaults, options);
      } catch {
        // Bad options: doStep rejects the call with the same error.
      }
    }
    // A queued step stays on this path when its slot is free at once (slotNow: in memory, no
    // wait, no write of its own); one that must wait goes on in doStep.
    let hold: SlotHold | undefined;
    if (
      decision.type !== 'execute' || opts === undefined || opts.timeoutMs !== undefined ||
      (opts.queue !== undefined && (hold = this.log.slotNow?.({ queue: opts.queue, key: opts.key ?? '', runId: this.log.runId, step: call.name })) === undefined)
    ) {
      return this.follow(p, link, resolve, promise, this.doStep(p, rawName, options, body, 'do', started));
    }
    const attempt = decision.attempt;
    p.attempts = attempt;
    const startedAt = decision.entry?.startedAt ?? this.log.now();
    let res = this.bodyNow(call, attempt, body);
    // The slot is held by the body alone: released as it ends, before its outcome is written.
    if (hold) res = res instanceof Promise ? releasing(res, hold) : (hold.release(), res);
    if (res instanceof Promise || !res.ok) {
      const begun = { call, attempt, startedAt, opts, ran: res instanceof Promise ? res : Promise.resolve(res) };
      return this.follow(p, link, resolve, promise, this.doStep(p, rawName, options, body, 'do', started, begun));
    }
    // As doStep past its attempt: cancelled while the body ran (it cancelled its own run).
    if (this.outcome || p.cancelled) return promise;
    p.settled = true;
    const entry = this.succeeded(call, 'do', attempt, startedAt, res.value);
    const value = decodeValue(res.value);
    this.inflight++;
    // Handed back at its turn, and counted as unsettled until that turn ends: a sibling
    // released in the same turn would otherwise not wait for this one's reaction (the
    // gate's rule; doStep's caller uncounts a few microtasks later, replay's too).
    const go = (): void => {
      this.pendingSteps.remove(link);
      this.uncountAtTurnEnd++;
      resolve(value);
    };
    this.log.commitThen!(entry, res.text, () => {
      this.settled();
      if (streamedParts(entry.result)) this.chunksCommitted(entry, attempt);
      if (this.ranHere) this.attemptEnded('step.succeeded', call, attempt);
      const turn = this.order.gate(entry.order, entry.seq);
      if (turn) void turn.then(go);
      else go();
    }, this.ioFailed);
    return promise;
  }

  /** A succeeded step's entry, completing now. Spelled out, not `{ ...base, status, ... }`: on
   *  Node 20 objects made by a spread plus more properties, or given one afterwards, survive
   *  scavenges though nothing holds them (a loop of them alone promotes ~3.5 MB per
   *  scavenge), and this runs once per step; `result` is in the literal (undefined for a void
   *  step, which every reader takes as absent). Elsewhere on the step path
   *  Object.assign({}, x, {...}) stands in for such spreads (same keys, same order). */
  private succeeded(call: StepCall, kind: StepKind, attempt: number, startedAt: number, result: Json | undefined): JournalEntry {
    return {
      seq: call.seq, name: call.name, kind, attempts: attempt, startedAt, status: 'succeeded', endedAt: this.log.now(), order: this.order.next(), result,
    };
  }

  /** Settles a step call's promise with what `run` gives (stepCall's calls, and doNow's cases
   *  that doStep goes on with). Uncounted before the code's continuation runs (the
   *  completion-order gate reads `unsettled`). */
  private follow<T>(p: PendingStep, link: Link<PendingStep>, resolve: (v: unknown) => void, promise: Promise<T>, run: Promise<unknown>): Promise<T> {
    const done = () => {
      this.pendingSteps.remove(link);
      this.unsettled--;
    };
    run.then(
      (v) => (done(), resolve(v)),
      (e: unknown) => (done(), p.reject(e as Error)),
    );
    return promise;
  }

  /** A log that journals positions as it goes said which step it holds there. */
  private checkRecorded(call: StepCall | { seq: number; kind: 'end'; name: string }, recorded: Recorded | void | undefined): boolean {
    const d = recorded && decideRecorded(call, recorded);
    if (!d) return true;
    this.diverged(d);
    return false;
  }

  /** A new step of any kind but `do` begins (its attempts mark the position for `do`). */
  private async open(call: StepCall): Promise<boolean> {
    const opened = this.log.open?.(call);
    if (!opened) return true;
    const recorded = await this.io(opened);
    return !this.outcome && this.checkRecorded(call, recorded);
  }

  /** `started`: doNow called begin already. `begun`: doNow also began the attempt (its body
   *  returned a promise, or failed); the rest is this path's. */
  private async doStep<T>(
    p: PendingStep, rawName: string, options: StepOptions | undefined, body: StepBody<T>, kind: 'do' | 'use' = 'do',
    started = this.begin(kind, rawName), begun?: Begun,
  ): Promise<T> {
    let call: StepCall, attempt: number, startedAt: number, opts: NormalizedStepOptions, ran: Promise<AttemptResult & { recorded?: Recorded }>;
    if (begun) ({ call, attempt, startedAt, opts, ran } = begun);
    else {
      if (!started) return never();
      const { decision } = started;
      call = started.call;
      p.call = call;
      if (decision.type === 'replay') return (p.replay = true), (await this.replay(decision.entry)) as T;
      p.attempts = decision.type === 'execute' ? decision.attempt : decision.type === 'suspend' ? decision.entry.attempts : undefined;
      // A cancel waits to be delivered: this step gets it rather than run.
      if (this.cancelPhase === 'pending') return this.block({ status: 'retrying' });
      if (decision.type === 'suspend') return this.block({ status: decision.status, wakeAt: decision.until });
      if (decision.type !== 'execute') throw new Error(`unexpected decision ${decision.type} for step.do`);
      opts = resolveStepOptions(call.name, this.stepDefaults, options);
      // Awaited only when there is something to flush: an await costs a turn of microtasks
      // and its garbage on every step.
      if (this.pendingWrites.length > 0) await this.flushPending();
      // A cancel (or the engine stopping) that landed while pending writes flushed: no new attempt.
      if (this.outcome || this.log.cancelRequested()) return this.finish({ type: 'cancelled' }), never();
      if (p.cancelled) return never();
      attempt = decision.attempt;
      startedAt = decision.entry?.startedAt ?? this.log.now();
      const c = call;
      const a = attempt;
      const timeoutMs = opts.timeoutMs;
      const bounded = (body as { [BOUNDED_BODY]?: boolean })[BOUNDED_BODY] === true;
      const attemptNow = () => this.log.attempt(c, a, () => this.runBody(c, a, timeoutMs, body), bounded ? { timeoutMs, bounded } : { timeoutMs });
      // A queued step holds its queue slot only while its body runs (src/runtime/queues.ts);
      // its first attempt started when the slot was granted, not when it joined the line.
      const fresh = decision.entry === undefined;
      ran = opts.queue === undefined ? attemptNow() : this.queued(c, a, opts, attemptNow, fresh ? (at) => (startedAt = at) : undefined);
    }
    const res = await this.io(ran);
    // Cancelled while the body ran: the step is recorded as cancelled; its outcome is ignored.
    if (this.outcome || p.cancelled || !this.checkRecorded(call, res.recorded)) return never();
    if (res.ok) {
      p.settled = true;
      const entry = this.succeeded(call, kind, attempt, startedAt, res.value);
      await this.io(this.log.record(entry, res.text));
      if (streamedParts(entry.result)) this.chunksCommitted(entry, attempt);
      if (this.ranHere) this.attemptEnded('step.succeeded', call, attempt);
      const turn = this.order.gate(entry.order, entry.seq);
      if (turn) await turn;
      return decodeValue<T>(res.value);
    }
    const base = { seq: call.seq, name: call.name, kind, attempts: attempt, startedAt };
    // step.use with no eligible provider: parked until one is provided (not an attempt).
    if (isPark(res)) return this.traceEvent('park', call.name), this.ranHere && this.attemptEnded('step.parked', call, attempt, { error: res.error }), this.block({ status: 'parked', entry: Object.assign({}, base, { attempts: attempt - 1, status: 'parked' as const, error: res.error }) });
    if (res.fatal) {
      const error = res.error;
      p.settled = true;
      // A log's own refusal (not the value's: that one is a terminal failure of the step,
      // thrown into the code below): the run fails at once.
      await this.io(this.log.record(Object.assign({}, base, { status: 'failed' as const, error, endedAt: this.log.now(), order: this.order.next() })));
      if (this.ranHere) this.attemptEnded('step.failed', call, attempt, { error });
      this.finish({ type: 'failed', error });
      return never();
    }
    let retry: ReturnType<typeof decideRetry>;
    let error = res.error;
    try {
      // A delay function (retries.delay) gets the error as the class it was thrown as.
      retry = decideRetry(opts.retry, attempt, res.terminal ? new TerminalError(error.message) : opts.retry.delayFn ? fromErrorInfo(error) : error, () => this.log.random());
    } catch (err) {
      // The delay function threw or gave no duration: the step fails with that, not retried.
      error = toErrorInfo(err);
      retry = { retry: false, reason: 'terminal' };
    }
    if (retry.retry) {
      const nextRetryAt = this.log.now() + retry.delayMs;
      this.traceEvent('retry', call.name, nextRetryAt);
      if (this.ranHere) this.attemptEnded('step.retrying', call, attempt, { error, until: nextRetryAt });
      return this.block({ status: 'retrying', wakeAt: nextRetryAt, entry: Object.assign({}, base, { status: 'retrying' as const, error, nextRetryAt, retryLimit: opts.retry.limit }) });
    }
    p.settled = true;
    const order = this.order.next();
    await this.io(this.log.record(Object.assign({}, base, { status: 'failed' as const, error, endedAt: this.log.now(), order })));
    if (this.ranHere) this.attemptEnded('step.failed', call, attempt, { error });
    await this.order.gate(order, call.seq);
    throw fromErrorInfo(error);
  }

  /** Waits for a slot of the step's queue (abortable like a body: a cancel, the engine
   *  stopping), then runs the attempt in it. */
  private queued(call: StepCall, attempt: number, opts: NormalizedStepOptions, run: () => Promise<AttemptResult>, granted?: (at: number) => void): Promise<AttemptResult> {
    const info = new AttemptInfo(attempt, idempotencyKeyOf(this.log.runId, call.name));
    const key = this.aborts.add(info);
    const req = { queue: opts.queue!, key: opts.key ?? '', runId: this.log.runId, step: call.name };
    const hold = this.log.slotNow?.(req);
    if (hold) return releasing(run(), hold);
    let waiting = true;
    const askKey = this.slotAsks.add(info);
    this.slotWaits++;
    // Only slot waits in flight once io() counts this one: idle() may look again then.
    if (this.inflight === this.slotWaits - 1) queueMicrotask(() => this.slotBound && this.log.slotBound?.());
    const done = () => {
      if (waiting) (waiting = false), this.slotWaits--;
      this.aborts.remove(key);
      this.slotAsks.remove(askKey);
    };
    let asked = false;
    return queuedAttempt(this.log, req, info.signal, (h) => {
      asked = true;
      done();
      // The engine stopped or crashed (or a cancel landed) between the grant and now (a
      // rate-limited grant waits for its commit): no body starts, as after a flush (doStep).
      if (this.outcome || this.log.cancelRequested()) return this.finish({ type: 'cancelled' }), never();
      granted?.(h.grantedAt ?? this.log.now());
      return run();
    }).then((res) => {
      // The wait was given up because the engine stopped (or a forced cancel): not a failed
      // attempt of the step, which the stop's flush would record (seed 7000113: 'engine stopped').
      if (!asked && (this.outcome || this.log.cancelRequested())) return this.finish({ type: 'cancelled' }), never<AttemptResult>();
      return res;
    }, (err: unknown) => {
      // Given up because the session ended (finish): nothing more to record.
      if (!asked && this.outcome) return never<AttemptResult>();
      throw err;
    }).finally(done);
  }

  /** Everything in flight is a wait for a queue slot: the session makes no progress until a
   *  body elsewhere ends or a rate window opens on the clock (TestEngine.idle counts it idle). */
  get slotBound(): boolean {
    return this.slotWaits > 0 && this.inflight === this.slotWaits && this.outcome === undefined;
  }

  /** A recorded outcome, handed back in completion order. */
  private async replay(entry: JournalEntry): Promise<Json | undefined> {
    const gate = this.order.gate(entry.order, entry.seq);
    if (gate) await gate;
    // A cancel the execution delivered only after the function returned (to steps the code
    // never awaited) reaches the code after the return here too, as it did then (in
    // completion order alone it could come first). Seed 6042356's failure was the grace
    // (graceBounds), not this order; this keeps a replay's order the execution's.
    if (entry.error?.fields?.afterReturn === true && !this.returned) await (this.returnedAt ??= promiseWithResolve()).promise;
    if ((entry.error?.name === 'CancelledError' || isDeadlineError(entry.error)) && !this.returned) this.cancelReachedCode = true;
    // A sleep the backend finished between sessions: the code never got past it before.
    if (!this.fresh && this.log.completedOutside?.(entry)) this.fresh = true;
    if (entry.status === 'succeeded' && (entry.kind === 'stream' || streamedParts(entry.result))) this.chunksCommitted(entry);
    return decodeValue(replayed(entry)) as Json | undefined;
  }

  private callBody<T>(body: StepBody<T>, info: AttemptInfo): T | Promise<T> {
    this.inBodySync++;
    try {
      return body(info);
    } finally {
      this.inBodySync--;
    }
  }

  /** One attempt of a step body, as data: the value with its JSON text, or why it failed. */
  private runBody<T>(call: StepCall, attempt: number, timeoutMs: number | undefined, body: StepBody<T>): Promise<AttemptResult> {
    if (timeoutMs !== undefined) {
      const info = new AttemptInfo(attempt, idempotencyKeyOf(this.log.runId, call.name), this.options.runLog && this, call.name, this);
      return this.runTimedBody(call, attempt, timeoutMs, body, info, this.aborts.add(info));
    }
    const res = this.bodyNow(call, attempt, body);
    return res instanceof Promise ? res : Promise.resolve(res);
  }

  /** An attempt without a timeout: a body that returns a plain value (or throws) gives its
   *  outcome at once, with no promise or async frame of its own (this runs once per step). */
  private bodyNow<T>(call: StepCall, attempt: number, body: StepBody<T>): AttemptResult | Promise<AttemptResult> {
    const info = new AttemptInfo(attempt, idempotencyKeyOf(this.log.runId, call.name), this.options.runLog && this, call.name, this);
    const abortKey = this.aborts.add(info);
    if (this.ranHere) this.attemptBegan(call, attempt);
    // Traced: the body runs in its attempt span's context (its own spans nest under it).
    const at = this.trace === undefined ? undefined : this.traceAttempt(call, attempt, info.idempotencyKey);
    if (at) info.traced(at);
    let value: T | Promise<T>;
    try {
      value = at ? at.run(() => this.callBody(body, info)) : this.callBody(body, info);
    } catch (err) {
      this.aborts.remove(abortKey);
      return ended(at, failedAttempt(err, info));
    }
    if (!isThenable(value)) {
      this.aborts.remove(abortKey);
      return ended(at, this.attemptValue(call, value, info));
    }
    return Promise.resolve(value).then(
      (v) => (this.aborts.remove(abortKey), ended(at, this.attemptValue(call, v, info))),
      (err: unknown) => (this.aborts.remove(abortKey), ended(at, failedAttempt(err, info))),
    );
  }

  private async runTimedBody<T>(call: StepCall, attempt: number, timeoutMs: number, body: StepBody<T>, info: AttemptInfo, abortKey: Link<AttemptInfo>): Promise<AttemptResult> {
    let value: unknown;
    if (this.ranHere) this.attemptBegan(call, attempt);
    const at = this.trace === undefined ? undefined : this.traceAttempt(call, attempt, info.idempotencyKey);
    if (at) info.traced(at);
    try {
      value = await withTimeout(() => (at ? at.run(() => this.callBody(body, info)) : this.callBody(body, info)), timeoutMs, call.name, attempt);
    } catch (err) {
      // Past its timeout the attempt is over: tell the body to stop its work.
      if (err instanceof TimeoutError) info.abort(err);
      return ended(at, failedAttempt(err, info));
    } finally {
      this.aborts.remove(abortKey);
    }
    return ended(at, this.attemptValue(call, value, info));
  }

  /** A body's value as an attempt's outcome: with its stored form and text, or, when it
   *  cannot be stored (not storable, over the size limit), a terminal failure of the step:
   *  retrying the same body gives the same value, and the code's try/catch can recover. */
  private attemptValue(call: StepCall, value: unknown, info: AttemptInfo): AttemptResult {
    const streams = AttemptInfo.streamsOf(info);
    // A void step gives undefined, on first execution and on replay alike.
    if (value === undefined && !streams?.chunks.length) return streams?.end(true), { ok: true };
    try {
      const enc = value === undefined ? undefined : encodeValue(value, stepResult, this.maxPayloadBytes, call.name);
      if (!streams?.chunks.length) return streams?.end(true), { ok: true, value: enc!.stored, text: enc!.text };
      // Its chunks are committed with it (value-codec.ts, the streamed form), within the limit.
      const out = encodeStreamed(enc?.text, streams.chunks);
      const bytes = oversize(out.text, this.maxPayloadBytes);
      if (bytes !== undefined) throw new ValidationError(`${stepResult(call.name)} with the chunks its body streamed is ${bytes} bytes of JSON, over the limit of ${this.maxPayloadBytes} bytes (engine config maxPayloadBytes)`);
      streams.end(true);
      return { ok: true, value: out.stored, text: out.text };
    } catch (err) {
      streams?.end(false);
      return { ok: false, error: toErrorInfo(err), terminal: true };
    }
  }

  /** A chunk a step body wrote (info.stream): to this process's provisional readers. */
  bodyChunk(step: string, attempt: number, name: string, index: number, chunk: Json): void {
    this.options.events?.hold?.(this.log.runId, name, step, attempt, chunk);
    this.stepEvent('stream.provisional', { name: step, kind: 'do' }, { key: name, attempt, offset: index, chunk });
  }

  /** A body's attempt that wrote chunks ended; failed, its provisional readers rewind. */
  bodyEnded(step: string, attempt: number, discarded?: ReadonlyMap<string, number>): void {
    this.options.events?.release?.(this.log.runId, step, attempt);
    for (const [name, count] of discarded ?? []) this.stepEvent('stream.discarded', { name: step, kind: 'do' }, { key: name, attempt, offset: count });
  }

  /** A step holding stream chunks (a `stream` step, a body's streamed result) was committed
   *  or replayed: counted, and a committed one (`attempt`) tells its readers each chunk. */
  private chunksCommitted(step: { name: string; kind: StepKind; result?: Json }, attempt?: number): void {
    const chunks = chunksOf(step);
    if (chunks.length === 0) return;
    const counts = (this.streamCounts ??= new Map());
    for (const [name, chunk] of chunks) {
      const offset = counts.get(name) ?? 0;
      counts.set(name, offset + 1);
      if (attempt !== undefined) this.stepEvent('stream.chunk', step, { key: name, offset, chunk, attempt });
    }
  }

  private async sleepStep(p: PendingStep, rawName: string, wakeAtFrom: (now: number) => number): Promise<void> {
    const started = this.begin('sleep', rawName);
    if (!started) return never();
    const { call, decision } = started;
    p.call = call;
    if (decision.type === 'replay') return (p.replay = true), void (await this.replay(decision.entry));
    if (this.cancelPhase === 'pending' && decision.type !== 'wake') return this.block({ status: 'sleeping' });
    if (decision.type === 'suspend') return this.block({ status: 'sleeping', wakeAt: decision.until });
    if (decision.type === 'wake') {
      p.settled = true;
      const order = this.order.next();
      await this.io(this.log.record(Object.assign({}, decision.entry, { status: 'succeeded' as const, endedAt: this.log.now(), order })));
      await this.order.gate(order, call.seq);
      return;
    }
    if (!(await this.open(call)) || p.cancelled) return never();
    const now = this.log.now();
    const wakeAt = wakeAtFrom(now);
    const entry: JournalEntry = { seq: call.seq, name: call.name, kind: 'sleep', status: 'sleeping', attempts: 1, startedAt: now, wakeAt };
    if (wakeAt <= now) {
      // Due at once (sleep(0), negative, or a past sleepUntil): no suspension needed.
      p.settled = true;
      const order = this.order.next();
      await this.io(this.log.record(Object.assign({}, entry, { status: 'succeeded' as const, endedAt: now, order })));
      await this.order.gate(order, call.seq);
      return;
    }
    this.traceEvent('sleep', call.name, wakeAt);
    this.stepEvent('step.sleeping', call, { until: wakeAt });
    return this.block({ status: 'sleeping', wakeAt, entry });
  }

  private async waitStep(p: PendingStep, rawName: string, timeoutMs: number | undefined): Promise<Json> {
    const started = this.begin('wait', rawName);
    if (!started) return never();
    const { call, decision } = started;
    p.call = call;
    if (decision.type === 'replay') return (p.replay = true), (await this.replay(decision.entry)) as Json;
    if (this.cancelPhase === 'pending' && decision.type !== 'await') return this.block({ status: 'waiting' });
    const signal = String(rawName);
    // Waits of one name look in the order the code called them: the turn is taken at the
    // call, before any await (an open, a flush of pending writes), so none can reorder them.
    const tails = (this.lookTail ??= new Map());
    const before = tails.get(signal);
    let turnDone!: () => void;
    tails.set(signal, new Promise<void>((r) => (turnDone = r)));
    try {
      if (decision.type !== 'await' && !(await this.open(call))) return never();
      if (p.cancelled) return never();
      const opened = this.log.now();
      const entry: JournalEntry =
        decision.type === 'await'
          ? decision.entry
          : { seq: call.seq, name: call.name, kind: 'wait', status: 'waiting', attempts: 1, startedAt: opened, wakeAt: timeoutMs === undefined ? undefined : opened + timeoutMs };
      if (before) await before;
      await this.flushPending();
      if (p.cancelled) return never();
      // An earlier wait of this name is still open in this session (it looked and found
      // nothing, or was held behind one that did): it keeps its place, and the next signal of
      // the name is its own, whenever it arrives. So this wait does not look past it, even
      // once its deadline has passed: then it times out (a signal sent since is the earlier
      // wait's; taking it here broke send order, simulation seeds 902656 and 952078).
      if ((this.waitingOn?.get(signal) ?? 0) > 0) {
        if (entry.wakeAt !== undefined && entry.wakeAt <= this.log.now()) return await this.timeOut(p, call, entry);
        return this.blockWaiting(p, signal, entry, decision.type === 'await');
      }
      // The order is taken before looking (the log records a taken signal with it, atomically);
      // results of other steps wait for it until the look ends, so the code sees them in the
      // order recorded. No signal: the order is given up (a harmless gap).
      const order = this.order.next();
      p.looking = true;
      const got = await this.io(this.log.takeSignal(signal, Object.assign({}, entry, { status: 'succeeded' as const, endedAt: this.log.now(), order })));
      p.looking = false;
      if (p.cancelled) return this.order.abandon(order), never();
      if (got) {
        p.settled = true;
        this.traceEvent('signal', call.name);
        this.stepEvent('step.signaled', call);
        await this.order.gate(order, call.seq);
        return decodeValue<Json>(got.payload);
      }
      this.order.abandon(order);
      // A cancel delivered while this wait looked: it gets it now, like its siblings did.
      if (this.cancelPhase === 'delivered' && call.seq < this.cancelSeq) return this.cancelTargets([p]), never();
      if (entry.wakeAt !== undefined && entry.wakeAt <= this.log.now()) return await this.timeOut(p, call, entry);
      return this.blockWaiting(p, signal, entry, decision.type === 'await');
    } finally {
      turnDone();
    }
  }

  /** A wait that stays open in this session: later waits of its name queue behind it. */
  private blockWaiting(p: PendingStep, signal: string, entry: JournalEntry, recorded: boolean): Promise<never> {
    const waiting = (this.waitingOn ??= new Map());
    waiting.set(signal, (waiting.get(signal) ?? 0) + 1);
    p.openOn = signal;
    if (!recorded) {
      this.traceEvent('wait', entry.name, entry.wakeAt);
      this.stepEvent('step.waiting', entry, entry.wakeAt === undefined ? undefined : { until: entry.wakeAt });
    }
    return this.block({ status: 'waiting', wakeAt: entry.wakeAt, entry: recorded ? undefined : entry, signal });
  }

  /** A wait whose deadline passed with no signal of its own: recorded timed out, thrown. */
  private async timeOut(p: PendingStep, call: StepCall, entry: JournalEntry): Promise<never> {
    p.settled = true;
    const error = toErrorInfo(new TimeoutError(`waitForEvent '${call.name}' timed out after ${timeoutMsOf(entry)}ms`));
    const order = this.order.next();
    await this.io(this.log.record(Object.assign({}, entry, { status: 'timedout' as const, error, endedAt: this.log.now(), order })));
    await this.order.gate(order, call.seq);
    throw fromErrorInfo(error);
  }

  private async emitStep(eventName: string, payload: unknown, options: EmitOptions | undefined): Promise<void> {
    if (typeof eventName !== 'string' || eventName.length === 0) throw new ValidationError('ctx.emit: event name must be a non-empty string');
    const started = this.begin('emit', `emit:${eventName}`);
    if (!started) return never();
    const { call, decision } = started;
    // Counted among the pending step calls like any other (the completion-order gate asks
    // whether other branches are pending); uncounted before the code's continuation runs.
    this.unsettled++;
    try {
      // An emit completes like a step (its write is awaited): it takes its place in the
      // completion order, so code after it interleaves with other branches the same on replay.
      if (decision.type === 'replay') return void (await this.replay(decision.entry));
      const data = encodeValue(payload, `ctx.emit('${eventName}') payload`, this.maxPayloadBytes).stored;
      const id = options?.id ?? idempotencyKeyOf(this.log.runId, call.name);
      const now = this.log.now();
      await this.flushPending();
      const order = this.order.next();
      const recorded = await this.io(
        this.log.emit(
          { seq: call.seq, name: call.name, kind: 'emit', status: 'succeeded', attempts: 1, result: { event: eventName, id }, startedAt: now, endedAt: now, order },
          { name: eventName, payload: data, id },
        ),
      );
      if (!this.checkRecorded(call, recorded)) return this.order.abandon(order), never();
      await this.order.gate(order, call.seq);
      // An event schema refused the payload: recorded as a failed emit, nothing published.
      if (recorded && recorded.refused) throw fromErrorInfo(recorded.refused);
    } finally {
      this.unsettled--;
    }
  }

  /** ctx.publish (docs/live-output.md): a journal entry of kind `publish` holding `{ key,
   *  value }`, read back as the run's published state. */
  private async publishStep(rawKey: unknown, value: unknown): Promise<void> {
    const key = checkStateKey(rawKey, 'ctx.publish key');
    const stored = storedArg(value, `ctx.publish('${key}') value`, this.maxPayloadBytes);
    await this.valueStep('publish', publishStepName(key), { key, value: stored }, { type: 'state.published', key });
  }

  /** ctx.stream(name): a writer whose each write (and the close) is a journal entry of kind
   *  `stream` holding `{ stream, chunk }` (or `{ stream, closed: true }`), read back in order
   *  by runs.stream. A write after the close is refused (the close replays first, so a replay
   *  refuses the same writes). */
  private streamWriter(rawName: unknown): StreamWriter {
    const name = checkStateKey(rawName, 'ctx.stream name');
    const closed = (this.closedStreams ??= new Set());
    const refuseClosed = () => {
      if (closed.has(name)) throw new ValidationError(`ctx.stream('${name}'): the stream is closed; nothing more can be written to it`);
    };
    return {
      write: async (chunk: unknown) => {
        refuseClosed();
        const stored = storedArg(chunk ?? null, `ctx.stream('${name}') chunk`, this.maxPayloadBytes);
        await this.valueStep('stream', streamStepName(name), { stream: name, chunk: stored }, { type: 'stream.chunk', key: name });
      },
      close: async () => {
        refuseClosed();
        closed.add(name);
        await this.valueStep('stream', streamStepName(name), { stream: name, closed: true }, { type: 'stream.closed', key: name });
      },
    };
  }

  /** A step whose one attempt journals a value the code made (publish, a stream's write):
   *  a log that journals as it goes (Restate) keeps it there and a replay of the invocation
   *  gets the value journaled then; a replayed one writes nothing and reports nothing. */
  private async valueStep(kind: 'publish' | 'stream', rawName: string, fresh: Json, event: Partial<StepEvent> & { type: StepEventType }): Promise<void> {
    const started = this.begin(kind, rawName);
    if (!started) return never();
    const { call, decision } = started;
    // Pending like any step call until the code's continuation runs (the completion-order gate).
    this.unsettled++;
    try {
      if (decision.type === 'replay') return void (await this.replay(decision.entry));
      await this.flushPending();
      const res = await this.io(this.log.attempt(call, 1, () => Promise.resolve({ ok: true as const, value: fresh })));
      if (this.outcome || !this.checkRecorded(call, res.recorded)) return never();
      const now = this.log.now();
      const order = this.order.next();
      const value = res.ok ? res.value : fresh;
      await this.io(this.log.record({ seq: call.seq, name: call.name, kind, status: 'succeeded', attempts: 1, result: value, startedAt: now, endedAt: now, order }));
      // A stream's event carries its chunk and offset, so a reader in this process takes it
      // without reading the run again (live-output.ts).
      if (kind === 'stream' && event.type === 'stream.chunk') this.chunksCommitted({ name: call.name, kind, result: value }, 1);
      else if (kind === 'stream') this.stepEvent(event.type, call, { ...event, offset: this.streamCounts?.get(event.key!) ?? 0 });
      else this.stepEvent(event.type, call, event);
      await this.order.gate(order, call.seq);
    } finally {
      this.unsettled--;
    }
  }
}

/** A value the code hands over, in its stored form, or a one-line ValidationError. */
function storedArg(value: unknown, what: string, maxBytes: number): Json {
  try {
    return encodeValue(value, what, maxBytes).stored;
  } catch (err) {
    throw new ValidationError((err as Error).message);
  }
}

/** The suspension of a run whose every branch is blocked: it wakes at the earliest due
 *  time or on any signal one of its waits takes. */
function suspension(blocked: readonly Blocked[], graceEnds?: number): RunOutcome {
  let first: Blocked | undefined;
  for (const b of blocked) if (b.wakeAt !== undefined && (first === undefined || b.wakeAt < first.wakeAt!)) first = b;
  // Cleanup after a cancel wakes at the end of its grace at the latest, to end the run.
  if (graceEnds !== undefined && (first?.wakeAt === undefined || graceEnds < first.wakeAt)) first = { status: first?.status ?? 'sleeping', wakeAt: graceEnds };
  const entries = blocked.flatMap((b) => (b.entry ? [b.entry] : []));
  const signals = [...new Set(blocked.flatMap((b) => (b.signal === undefined ? [] : [b.signal])))];
  // A run with an open wait is `waiting` (a signal wakes it) even if a sleep is due first;
  // one with a parked capability step is `parked` (a provider wakes it).
  const status = signals.length > 0 ? 'waiting' : blocked.some((b) => b.status === 'parked') ? 'parked' : (first?.status ?? 'waiting');
  return { type: 'suspended', status, wakeAt: first?.wakeAt, entries, signals };
}

function timeoutMsOf(e: JournalEntry): number {
  return e.wakeAt !== undefined && e.startedAt !== undefined ? e.wakeAt - e.startedAt : 0;
}

function replayed(entry: JournalEntry): Json | undefined {
  if (entry.status === 'succeeded') return entry.result;
  throw fromErrorInfo(entry.error ?? { name: 'Error', message: `step '${entry.name}' failed` });
}

/** Ends an attempt's trace (when traced) with its outcome, and hands the outcome on. */
function ended(at: AttemptTrace | undefined, r: AttemptResult): AttemptResult {
  if (at) at.end(r.ok, r.ok ? undefined : r.error);
  return r;
}

function failedAttempt(err: unknown, info?: AttemptInfo): AttemptResult {
  if (info) AttemptInfo.streamsOf(info)?.end(false);
  return { ok: false, error: toErrorInfo(err), terminal: err instanceof TerminalError };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

function promiseWithResolve(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** `ran`, releasing the slot `hold` once it settles. */
function releasing(ran: Promise<AttemptResult>, hold: SlotHold): Promise<AttemptResult> {
  return ran.then(
    (r) => (hold.release(), r),
    (err: unknown) => {
      hold.release();
      throw err;
    },
  );
}
