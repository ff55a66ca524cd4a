// The StepLog port inside a Deno run child, implemented over the step protocol: every
// operation is a request frame answered by the engine, which serves it from its own step
// log (the SQLite journal); a `record` resolves only once the engine made it durable. The
// clock is the engine's (each reply carries its `now`; in between, time runs on locally),
// randomness is local. Replay decisions stay in the shared RunSession.
import { fromErrorInfo, RunStateError, type ErrorInfo } from '../src/domain/errors.ts';
import type { CapabilityRequest } from '../src/domain/capability.ts';
import type { JournalEntry } from '../src/domain/journal.ts';
import type { Json } from '../src/domain/json.ts';
import type { StepCall } from '../src/domain/replay.ts';
import type { ChildFrame, EngineFrame } from '../src/domain/runner-protocol.ts';
import type { AttemptLimits, AttemptResult, ChildStartCall, Recorded, SlotHold, SlotRequest, StepLog } from '../src/ports/step-log.ts';

type Hello = Extract<EngineFrame, { t: 'hello' }>;
type CancelView = Hello['cancel'];
/** A request frame before its id is assigned. */
type Request = ChildFrame extends infer F ? (F extends { id: number } ? (F extends { t: 'attemptResult' } ? never : Omit<F, 'id'>) : never) : never;

export class WireLog implements StepLog {
  readonly runId: string;
  readonly workflow: string;
  readonly input: Json;
  readonly entries: JournalEntry[] = [];
  readonly open?: (call: StepCall) => Promise<Recorded> | undefined;
  readonly close?: (position: number) => Promise<Recorded> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  /** Attempts whose body the engine asked to run (`run` frames), by request id. */
  private readonly bodies = new Map<number, () => void>();
  private cancel: CancelView;
  /** runs.pause as the engine last said (hello, every reply, and a `pause` frame). */
  private paused: boolean;
  private cancelListener: ((reason: Error) => void) | undefined;
  private engineNow: number;
  private nowAt = performance.now();
  readonly journalClock: boolean;
  /** The run's deadline (docs/control.md): the session here meets it as in-process. */
  readonly deadline?: number;

  /** `outside`: the seqs of entries the backend finished between sessions (entry.outside). */
  constructor(hello: Hello, entries: JournalEntry[], private readonly send: (f: ChildFrame) => void, private readonly outside: ReadonlySet<number> = new Set()) {
    this.runId = hello.runId;
    this.workflow = hello.workflow;
    this.input = hello.input as Json;
    for (const e of entries) this.entries[e.seq] = e;
    this.cancel = hello.cancel;
    this.paused = hello.pause === true;
    this.engineNow = hello.now;
    this.journalClock = hello.caps.journalClock === true;
    if (hello.deadline !== undefined) this.deadline = hello.deadline;
    if (hello.caps.open) this.open = (call) => this.request<Recorded | null>({ t: 'open', call }).then((r) => r ?? undefined) as Promise<Recorded>;
    if (hello.caps.close) this.close = (position) => this.request<Recorded | null>({ t: 'close', position }).then((r) => r ?? undefined) as Promise<Recorded>;
    if (hello.caps.queues) this.slot = (req, signal) => this.askSlot(req, signal);
  }

  /** Flow control (docs/flow-control.md): the engine holds the slot, not this child. */
  readonly slot?: (req: SlotRequest, signal: AbortSignal) => Promise<SlotHold>;

  /** A frame from the engine after the journal was delivered. */
  receive(f: EngineFrame): void {
    switch (f.t) {
      case 'reply': {
        this.tick(f.now);
        if (f.pause !== undefined) this.paused = f.pause;
        const p = this.pending.get(f.id);
        if (!p) throw new Error(`reply ${f.id} answers no request`);
        this.pending.delete(f.id);
        return f.ok ? p.resolve(f.value) : p.reject(fromErrorInfo((f.error ?? { name: 'Error', message: `request ${f.id} failed in the engine` }) as ErrorInfo));
      }
      case 'run': {
        const start = this.bodies.get(f.id);
        if (!start) throw new Error(`run ${f.id} names no attempt`);
        this.bodies.delete(f.id);
        return start();
      }
      case 'pause':
        this.paused = f.pause;
        return;
      case 'cancel':
        this.cancel = f.cancel;
        return this.cancelListener?.(new RunStateError(`run ${this.runId} was cancelled`)); // as in-process
      default:
        throw new Error(`unexpected '${f.t}' frame after the journal`);
    }
  }

  /** The connection ended: nothing pending will be answered. */
  lost(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  now(): number {
    // A journaled clock (Restate) is what the engine said last: time running on here would
    // put other times into state that a replay compares (a journal mismatch).
    if (this.journalClock) return this.engineNow;
    return this.engineNow + Math.floor(performance.now() - this.nowAt);
  }

  /** ctx.log writes after such an entry: the code never got past it before. */
  completedOutside(entry: JournalEntry): boolean {
    return this.outside.has(entry.seq);
  }

  random(): number {
    return Math.random();
  }

  attempt(call: StepCall, attempt: number, run: () => Promise<AttemptResult>, limits?: AttemptLimits): Promise<AttemptResult & { recorded?: Recorded }> {
    const id = this.nextId++;
    // The body runs when the engine's log runs it (a log may hand back a recorded outcome
    // instead), and its result goes back under the same id.
    this.bodies.set(id, () => {
      void run().then((result) => this.send({ t: 'attemptResult', id, result }));
    });
    // The step's timeout travels so the engine can kill a body that blocks this child.
    return this.requestWithId(id, limits?.timeoutMs === undefined ? { t: 'attempt', call, attempt } : { t: 'attempt', call, attempt, timeoutMs: Math.ceil(limits.timeoutMs) });
  }

  /** Asks the engine for a slot by the queue's name (the engine resolves it against the
   *  queues this workflow declared); the release is the engine's when the attempt ends, and
   *  this child's `release` only gives up an ask (a cancel) or a slot no body used. */
  private askSlot(req: SlotRequest, signal: AbortSignal): Promise<SlotHold> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const id = this.nextId++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.send({ t: 'release', slot: id });
    };
    const queue = typeof req.queue === 'string' ? req.queue : req.queue.name;
    return new Promise<SlotHold>((resolve, reject) => {
      // Given up (a cancel): the ask ends only once the engine answered it, so that a run
      // shown cancelled is out of the line (on Restate the engine's leave is a call it awaits).
      let aborted = false;
      const onAbort = () => {
        aborted = true;
        release();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.requestWithId<{ grantedAt: number }>(id, { t: 'slot', step: req.step, queue, key: req.key }).then(
        (g) => {
          signal.removeEventListener('abort', onAbort);
          if (aborted) return reject(signal.reason); // granted meanwhile: the release went already
          resolve({ grantedAt: g.grantedAt, release });
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(aborted ? signal.reason : err);
        },
      );
    });
  }

  /** step.use: the provider runs in the engine's process; this child only asks (a frame). */
  capability(request: CapabilityRequest): Promise<Json | undefined> {
    return this.request<Json | undefined>({ t: 'capability', request });
  }

  /** step.start: the engine starts the child run (docs/children.md); this child only asks. */
  startChild(request: ChildStartCall): Promise<{ runId: string; created: boolean }> {
    return this.request<{ runId: string; created: boolean }>({ t: 'startChild', request });
  }

  /** ctx.signal: the engine sends it. */
  sendSignal(runId: string, name: string, payload: Json): Promise<void> {
    return this.request<null>({ t: 'sendSignal', runId, name, payload }).then(() => undefined);
  }

  record(entry: JournalEntry): Promise<void> {
    return this.request({ t: 'record', entry });
  }

  takeSignal(signalName: string, entry: JournalEntry): Promise<{ payload: Json } | undefined> {
    return this.request<{ payload: Json } | null>({ t: 'takeSignal', signalName, entry }).then((r) => r ?? undefined);
  }

  emit(entry: JournalEntry, event: { name: string; payload: Json; id: string }): Promise<Recorded | void> {
    return this.request<Recorded | null>({ t: 'emit', entry, event }).then((r) => r ?? undefined);
  }

  cancelRequested(): boolean {
    return this.cancel.requested;
  }

  pauseRequested(): boolean {
    return this.paused;
  }

  cancelState(): 'none' | 'requested' | 'forced' {
    return this.cancel.state;
  }

  onCancel(listener: (reason: Error) => void): void {
    this.cancelListener = listener;
  }

  private tick(now: number): void {
    this.engineNow = now;
    this.nowAt = performance.now();
  }

  private request<T>(r: Request): Promise<T> {
    return this.requestWithId(this.nextId++, r);
  }

  private requestWithId<T>(id: number, r: Request): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.send({ ...r, id } as ChildFrame);
    });
  }
}
