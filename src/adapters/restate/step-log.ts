// The StepLog port inside one Restate invocation of a run. It makes no replay decisions:
// the shared RunSession does; this maps what the session asks onto Restate's journal.
//
// Journal shape per step position p: the step's first record is a `ctx.run('s<p>')` (a do
// step's first attempt, or a marker carrying kind and name for the other kinds), so the
// session learns which step was recorded there and reports a changed workflow itself,
// with our position and names, before Restate's own journal check would stall the
// invocation; later attempts are `ctx.run('s<p>.<n>')`. Every outcome is a journaled
// result, never a thrown error Restate would retry.
//
// The session is re-run from the top after every suspension (as on SQLite); the entries it
// replays from are kept here, in memory, as JSON text: each session gets fresh copies, and
// a Restate replay of the invocation rebuilds them from the same journaled results.
// Steps are mirrored into workflow state (`~s<p>`) for the views the engine reads over SQL.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import { CapabilityUnavailableError, type CapabilityRequest } from '../../domain/capability.ts';
import type { ErrorInfo } from '../../domain/errors.ts';
import { toStepView, type JournalEntry } from '../../domain/journal.ts';
import { EngineStateError, RunStateError, ValidationError } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import type { StepCall } from '../../domain/replay.ts';
import type { StepView } from '../../domain/run-view.ts';
import type { AttemptLimits, AttemptResult, ChildStartCall, Recorded, SlotHold, SlotRequest, StepLog } from '../../ports/step-log.ts';
import { restateSlot, type QueueCatalog } from './queue-slot.ts';
import { childRunId } from '../../domain/child-id.ts';
import type { ChildStartRequest } from '../../ports/executor.ts';
import { RestateDriver } from './driver.ts';
import { identityCodec, openJson, sealJson, type PayloadCodec } from '../../domain/payload-codec.ts';

/** A position's record as journaled in ctx.run results. */
interface Marker {
  k: Recorded['kind'];
  n: string;
  /** Wall time when it was journaled: the run's clock moves with journaled times only. */
  t: number;
}

type AttemptRecord = Marker & (
  | { ok: true; v?: Json }
  | { ok: false; error: ErrorInfo; terminal: boolean; fatal?: boolean }
);

/** A signal as the `signal` handler stores it in the durable promise `evt:<name>#<slot>`. */
export interface SignalEnvelope {
  v: Json;
  t: number;
}

export const signalPromise = (name: string, slot: number): string => `evt:${name}#${slot}`;

export interface RestateStepLogHooks {
  /** Publishes an event (dedup by id); called inside a journaled ctx.run. */
  emit(req: { name: string; payload: Json; id: string }): Promise<unknown>;
  /** A step's view changed (mirrored into workflow state). */
  stepChanged(step: StepView): void;
  /** Calls a host capability provider (step.use), inside the attempt's ctx.run. */
  capability?(req: CapabilityRequest, signal: AbortSignal): Promise<Json | undefined>;
  /** Starts a child run with its link (step.start's body, inside the attempt's ctx.run). */
  startChild?(req: ChildStartRequest): Promise<{ runId: string; created: boolean }>;
  /** Sends a signal to another run (ctx.signal's body, inside the attempt's ctx.run). */
  sendSignal?(runId: string, name: string, payload: Json): Promise<void>;
  /** The suspension's timer fired `lateMs` after its wake time (metrics; not on replay). */
  timerFired?(lateMs: number): void;
  /** The queues steps may name (flow control, queue-slot.ts); absent: no slot(). */
  queues?: QueueCatalog;
}

/** Wakes the SDK's progress loop, which may wait for outside progress (an input or a run
 *  closure's end): the loop of an interrupted race then sees it settled and ends. Reaches
 *  into SDK 1.17 internals (pinned; `test/restate/concurrency.test.ts` and the conformance
 *  case "a step called while another is in flight starts its body at once" cover it);
 *  false when they are not there, and then the driver does not interrupt races. */
function wakeProgressLoop(ctx: unknown): boolean {
  const channel = (ctx as { runClosuresTracker?: { channel?: { signal?: () => void } } }).runClosuresTracker?.channel;
  if (typeof channel?.signal !== 'function') return false;
  channel.signal();
  return true;
}

export class RestateStepLog implements StepLog {
  entries: readonly JournalEntry[] = [];
  input: Json = null;
  private readonly stored: string[] = [];
  /** Signals of a name land in slots 1, 2, 3... in arrival order. Each wait reserves the
   *  lowest free slot of its name the first time it looks (call order, so two waits open at
   *  once never read the same slot) and keeps it until it receives; a wait that times out
   *  frees its slot, so a late signal goes to the next wait of that name. */
  private readonly reserved = new Map<number, { name: string; slot: number; open: boolean }>();
  private readonly nextSlot = new Map<string, number>();
  private readonly freed = new Map<string, number[]>();
  /** The `get` of each signal slot a suspend of this invocation raced, made once and raced
   *  again by every later suspend; `arrived` is its envelope once a race returned it. A new
   *  `get` of every open slot per suspend made a fan-out of n children journal n gets per
   *  wake-up (with the peeks, ~2 x wake-ups x n commands); now one per slot. */
  private readonly watched = new Map<string, { get: restate.RestatePromise<number>; arrived?: SignalEnvelope }>();
  private clock: number;
  /** Every await of the invocation goes through it (the SDK allows one awaiter at a time). */
  /** Cancels Restate delivered to this invocation: the first is thrown into the code, a
   *  second ends the run at once. */
  private cancels = 0;
  readonly driver = new RestateDriver(
    () => {
      this.cancels++;
      this.cancelListener?.(new RunStateError(`run ${this.runId} was cancelled`));
    },
    () => wakeProgressLoop(this.rctx),
  );
  private cancelListener?: (reason: Error) => void;
  private readonly onStop = () => this.cancelListener?.(new EngineStateError('engine stopped'));
  /** This attempt of the invocation is over (Restate's attemptCompletedSignal): its stream
   *  closed, e.g. the Restate node leading the run's partition died. Nothing sent now reaches
   *  Restate, and the invocation goes on in a new attempt (any replica) that runs an unrecorded
   *  body again in the same queue slot: bodies still running here are told to stop, so one
   *  that passes its signal on does not run beside its own retry. */
  private readonly attemptEnded: AbortSignal | undefined;
  private readonly onAttemptEnded = () => this.cancelListener?.(new EngineStateError(`the Restate attempt running run ${this.runId} ended (its connection closed); the run goes on in a new attempt`));

  constructor(
    private readonly rctx: restate.WorkflowContext,
    readonly workflow: string,
    private readonly inputText: string,
    startedAt: number,
    private readonly hooks: RestateStepLogHooks,
    private readonly stopSignal?: AbortSignal,
    /** Step values, error details and signal payloads are journaled sealed through it. */
    private readonly codec: PayloadCodec = identityCodec,
  ) {
    this.clock = startedAt;
    stopSignal?.addEventListener('abort', this.onStop, { once: true });
    this.attemptEnded = rctx.request().attemptCompletedSignal;
    this.attemptEnded?.addEventListener('abort', this.onAttemptEnded, { once: true });
    const start = hooks.startChild;
    if (start) this.startChild = (req) => start({ ...req, runId: req.runId ?? childRunId(this.runId, req.parent.step) });
    if (hooks.sendSignal) this.sendSignal = hooks.sendSignal;
    const catalog = hooks.queues;
    if (catalog) {
      const c = { rctx, driver: this.driver, catalog, stopping: () => stopSignal?.aborted === true || this.attemptEnded?.aborted === true, advance: (t: number) => this.advance(t) };
      this.runSlot = (req, signal) => restateSlot(c, req, signal);
      this.slot = (req, signal) => {
        // A step asking for the queue whose slot its run holds would wait for its own run.
        if (this.ownQueue !== undefined && this.ownQueue === (typeof req.queue === 'string' ? req.queue : req.queue.name)) {
          return Promise.reject(new ValidationError(`step '${req.step}': queue '${this.ownQueue}' is this run's own queue (workflow option runs.queue), whose slot the run holds; a step waiting for it would wait for its own run: give the step another queue`));
        }
        return restateSlot(c, req, signal);
      };
    }
  }

  /** Flow control: a slot of a queue, from the queue's virtual object (queue-slot.ts). */
  readonly slot?: (req: SlotRequest, signal: AbortSignal) => Promise<SlotHold>;
  /** The run's own slot (run-slot.ts): as slot(), without the own-queue check. */
  readonly runSlot?: (req: SlotRequest, signal: AbortSignal) => Promise<SlotHold>;
  /** The queue whose slot the run holds (workflow option runs.queue), while it holds it. */
  ownQueue: string | undefined;

  /** Present when the engine gave the hooks (child-steps.ts checks for them). */
  readonly startChild?: (req: ChildStartCall) => Promise<{ runId: string; created: boolean }>;
  readonly sendSignal?: (runId: string, name: string, payload: Json) => Promise<void>;

  /** now() is the time of the last journaled event (see now()). */
  readonly journalClock = true;
  /** A slot is the invocation's: a Deno child that dies leaves it to the retry (queue-slot.ts). */
  readonly slotsOutliveSession = true;
  /** When the run must end (the run request's, docs/control.md). */
  deadline: number | undefined;

  onCancel(listener: (reason: Error) => void): void {
    this.cancelListener = listener;
  }

  /** A Deno child's server: the driver lets the child react before each race. */
  settleWith(gate: (() => Promise<void>) | undefined): void {
    this.driver.gate = gate;
  }

  /** Restate is replaying the invocation's journal (the SDK's own test for ctx.console,
   *  `isProcessing`, marked experimental: read only for telemetry, never for a decision). */
  replaying(): boolean {
    const processing = (this.rctx as unknown as { isProcessing?: () => boolean }).isProcessing;
    return processing ? !processing.call(this.rctx) : false;
  }

  /** The invocation is over. */
  dispose(): void {
    this.driver.close();
    this.stopSignal?.removeEventListener('abort', this.onStop);
    this.attemptEnded?.removeEventListener('abort', this.onAttemptEnded);
  }

  get runId(): string {
    return this.rctx.key;
  }

  /** Fresh copies of input and entries for the next session (workflow code may mutate them). */
  beginSession(): void {
    this.input = JSON.parse(this.inputText) as Json;
    this.entries = this.stored.map((text) => JSON.parse(text) as JournalEntry);
  }

  /** runs.retry: forgets the entries from `seq` on; the code meets those steps anew. */
  truncate(seq: number): void {
    if (this.stored.length > seq) this.stored.length = seq;
    // The discarded waits give up their signal slots: a slot still open goes to the next
    // wait of its name; a slot whose signal was taken stays used (the signal is consumed).
    for (const [at, wait] of this.reserved) {
      if (at < seq) continue;
      this.reserved.delete(at);
      if (wait.open) this.free(wait);
    }
  }

  private free(wait: { name: string; slot: number; open: boolean }): void {
    wait.open = false;
    const free = this.freed.get(wait.name) ?? [];
    free.push(wait.slot);
    free.sort((a, b) => a - b);
    this.freed.set(wait.name, free);
  }

  /** Restate cannot journal synchronously: the clock is the time of the last journaled
   *  event (run start, a step's record, a sleep's due time, a signal's arrival). */
  now(): number {
    return this.clock;
  }

  /** Moves the clock forward to a journaled time. */
  advance(t: number): void {
    this.clock = Math.max(this.clock, t);
  }

  random(): number {
    return this.rctx.rand.random();
  }

  open(call: StepCall): Promise<Recorded> {
    return this.mark(`s${call.seq}`, { k: call.kind, n: call.name });
  }

  close(position: number): Promise<Recorded> {
    return this.mark(`s${position}`, { k: 'end', n: '(end)' });
  }

  async attempt(call: StepCall, attempt: number, run: () => Promise<AttemptResult>, limits?: AttemptLimits): Promise<AttemptResult & { recorded: Recorded }> {
    const name = attempt === 1 ? `s${call.seq}` : `s${call.seq}.${attempt}`;
    const m = await this.journaled<AttemptRecord>(name, async () => {
      const r = await run();
      // The JSON text stays out of the journal: the value is journaled once.
      const rec = r.ok
        ? (r.value === undefined ? { ok: true as const } : { ok: true as const, v: sealJson(this.codec, r.value) })
        : { ...r, error: sealJson(this.codec, r.error as unknown as Json) as unknown as ErrorInfo };
      return { ...rec, k: call.kind, n: call.name, t: Date.now() };
    }, limits?.bounded === true);
    const recorded = { kind: m.k, name: m.n };
    if (!m.ok) return { ok: false, error: openJson<ErrorInfo>(this.codec, m.error), terminal: m.terminal, fatal: m.fatal, recorded };
    return m.v === undefined ? { ok: true, recorded } : { ok: true, value: openJson(this.codec, m.v), recorded };
  }

  capability(req: CapabilityRequest, signal: AbortSignal): Promise<Json | undefined> {
    if (!this.hooks.capability) return Promise.reject(new CapabilityUnavailableError(req.capability, req.affinity));
    return this.hooks.capability(req, signal);
  }

  async record(entry: JournalEntry): Promise<void> {
    // A wait that ended without a signal (timed out, or failed with a cancel's
    // CancelledError) gives its slot up: a signal landing there is the next wait's.
    const wait = entry.kind === 'wait' && (entry.status === 'timedout' || entry.status === 'failed') ? this.reserved.get(entry.seq) : undefined;
    if (wait?.open) this.free(wait);
    const text = JSON.stringify(entry);
    this.stored[entry.seq] = text;
    this.hooks.stepChanged(toStepView(JSON.parse(text) as JournalEntry));
  }

  async takeSignal(signalName: string, entry: JournalEntry): Promise<{ payload: Json } | undefined> {
    const wait = this.slotOf(signalName, entry.seq);
    // Returned by a suspend's race already: no command. Else a peek (a command), which sees
    // every signal that arrived since, so a session takes all the ends that came while the
    // run was busy, not only the one that woke it (one session for many of n children).
    let got = this.watched.get(signalPromise(signalName, wait.slot))?.arrived;
    if (got === undefined) {
      // peek() is typed as a plain Promise but is a RestatePromise (a journaled command) in
      // the SDK: awaiting it directly would be a second awaiter beside the driver.
      const peek = this.rctx.promise<SignalEnvelope>(signalPromise(signalName, wait.slot)).peek() as unknown as restate.RestatePromise<SignalEnvelope | undefined>;
      got = await this.driver.await(peek, true);
      if (got === undefined) return undefined;
    }
    wait.open = false;
    this.advance(got.t);
    // Sealed by the engine before it left for Restate (executor.signal).
    const payload = openJson(this.codec, got.v);
    await this.record({ ...entry, result: payload, endedAt: this.clock });
    return { payload };
  }

  private slotOf(name: string, seq: number): { name: string; slot: number; open: boolean } {
    const had = this.reserved.get(seq);
    if (had) return had;
    const free = this.freed.get(name);
    let slot = free?.shift();
    if (slot === undefined) {
      slot = this.nextSlot.get(name) ?? 1;
      this.nextSlot.set(name, slot + 1);
    }
    const wait = { name, slot, open: true };
    this.reserved.set(seq, wait);
    return wait;
  }

  async emit(entry: JournalEntry, event: { name: string; payload: Json; id: string }): Promise<Recorded> {
    const m = await this.journaled<Marker>(`s${entry.seq}`, async () => {
      await this.hooks.emit(event);
      return { k: entry.kind, n: entry.name, t: Date.now() };
    }, true);
    if (m.k === entry.kind && m.n === entry.name) await this.record({ ...entry, startedAt: m.t, endedAt: m.t });
    return { kind: m.k, name: m.n };
  }

  cancelRequested(): boolean {
    return this.cancels >= 2;
  }

  /** Set by the run handler: a pause was seen (run-pause.ts). */
  pauseRequested?: () => boolean;

  /** A cancelled run continues (run-continue.ts): the cancels so far are spent. */
  cancelTaken(): void {
    this.cancels = 0;
  }

  /** Restate cancelled the invocation (at least once). */
  get cancelled(): boolean {
    return this.cancels > 0;
  }

  cancelState(): 'none' | 'requested' | 'forced' {
    return this.cancels === 0 ? 'none' : this.cancels === 1 ? 'requested' : 'forced';
  }

  /** Waits until the suspended run can go on: its wake time, a signal in the slot of one of
   *  its open waits, the awakeable of its parked capability steps (`provided`, resolved
   *  with the time), or a pause request (`pause`, run-pause.ts), whichever comes first. */
  async suspend(wakeAt: number | undefined, signals: readonly string[], provided?: restate.RestatePromise<{ t?: number } | null>, pause?: restate.RestatePromise<number>): Promise<void> {
    const branches: restate.RestatePromise<number>[] = [];
    if (pause) branches.push(pause);
    if (provided) branches.push(provided.map((v) => (typeof v?.t === 'number' ? v.t : this.clock)));
    if (wakeAt !== undefined) {
      // Measured only for a timer this attempt of the invocation made live: its completion
      // arrives live too (a replay meets old timers, whose lateness is not this process's).
      const fired = this.replaying() ? undefined : this.hooks.timerFired;
      branches.push(this.rctx.sleep(Math.max(0, wakeAt - Date.now())).map(() => {
        if (fired) fired(Date.now() - wakeAt);
        return wakeAt;
      }));
    }
    const names = new Set(signals);
    for (const wait of this.reserved.values()) {
      if (!wait.open || !names.has(wait.name)) continue;
      branches.push(this.watch(signalPromise(wait.name, wait.slot)));
    }
    if (branches.length === 0) throw new Error('suspended with nothing to wake it');
    this.advance(await this.driver.await(branches.length === 1 ? branches[0]! : restate.RestatePromise.race(branches)));
  }

  /** The slot's one `get` in this invocation (see `watched`), resolving with the arrival time. */
  private watch(key: string): restate.RestatePromise<number> {
    let w = this.watched.get(key);
    if (!w) {
      const entry: { get: restate.RestatePromise<number>; arrived?: SignalEnvelope } = {
        get: this.rctx.promise<SignalEnvelope>(key).get().map((env) => {
          entry.arrived = env;
          return env?.t ?? 0;
        }),
      };
      this.watched.set(key, (w = entry));
    }
    return w.get;
  }

  private async mark(name: string, marker: Omit<Marker, 't'>): Promise<Recorded> {
    const m = await this.journaled<Marker>(name, () => ({ ...marker, t: Date.now() }), true);
    return { kind: m.k, name: m.n };
  }

  /** `quick`: the body ends on its own without waiting for another step (driver.ts WINDOW). */
  private async journaled<T extends Marker>(name: string, produce: () => Promise<T> | T, quick = false): Promise<T> {
    const m = await this.driver.await(this.rctx.run(name, produce), quick);
    this.advance(m.t);
    return m;
  }
}
