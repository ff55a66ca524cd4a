// Flow control for step bodies on a backend whose queue state one process owns (SQLite: one
// engine owns a data dir). The pure QueueState (src/domain/rate-limit.ts) decides who starts;
// this keeps one per queue, writes every wait and grant through the QueueStore, and wakes
// waiters as slots free up or a rate window opens. A step waits here with its run's session in
// flight; a sleeping or waiting run holds no slot (the slot is held by the body alone).
// Which grants are durable before the body (docs/flow-control.md, Durable and visible): a
// rate-limited one (a lost start would let the limit be exceeded after a restart). The rest
// are not: this process's memory is what grants slots (one engine owns a data dir), and the
// next owner frees every slot row, so a lost row never gives a slot twice or leaks one. A free
// slot with nobody waiting is granted synchronously (tryAcquire, the step's fast path); its
// row is written by the next group commit only if the body still runs then.
import { ValidationError } from '../domain/errors.ts';
import { QueueState, type QueueLimits, type QueueSpec, type QueueWait, type Waiting } from '../domain/rate-limit.ts';
import { RUN_SLOT, type HoldRows, type QueuedStep, type QueueStore } from '../ports/queue-store.ts';
import type { AttemptResult, SlotHold, SlotRequest, StepLog } from '../ports/step-log.ts';
import { toErrorInfo } from '../domain/errors.ts';
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import { QueueNames } from './queue-names.ts';

interface Waiter extends Waiting, QueuedStep {
  granted: boolean;
  /** When the queue's state counted the start (pump's clock read): the time stored and reported. */
  grantedAt?: number;
  /** Handed its slot (the grant is durable and the body may run). */
  resolved: boolean;
  gaveUp: boolean;
  /** Loaded from the store at start: its run has not asked again yet. */
  recovered: boolean;
  /** Recovered in a rate-limited queue: out of the line until its run asks again (see start()). */
  deferred?: boolean;
  resolve?: (h: SlotHold) => void;
  reject?: (err: unknown) => void;
}

interface Queue {
  spec: QueueSpec;
  state: QueueState<Waiter>;
  timer?: () => void;
  timerAt?: number;
  grants: number;
  /** Definition objects (queue()) already checked against `spec`: the fast path skips the check. */
  seen: WeakSet<object>;
}


export interface QueueManagerOptions {
  /** How long a waiter recovered at start keeps its place for its run to ask again. */
  recoveredGraceMs?: number;
  /** Arms a timer at an epoch ms on the engine's clock (a rate window opening): the manual
   *  clock of a test engine fires it as the test advances time. Default: setTimeout. */
  setTimer?: (at: number, fn: () => void) => () => void;
}

const DEFAULT_RECOVERED_GRACE_MS = 30_000;
const PRUNE_EVERY = 256;
const idOf = (runId: string, step: string) => `${runId}\u0000${step}`;
const sameLimits = (a: QueueLimits, b: QueueLimits) => JSON.stringify(a) === JSON.stringify(b);
/** The queue has a rate limit: each grant counts a start (durable before its body). */
const counted = (l: QueueLimits) => l.rate !== undefined || l.key?.rate !== undefined;

export class QueueManager {
  private readonly queues = new Map<string, Queue>();
  /** Every waiter not yet handed its slot, by run and step. */
  private readonly waiters = new Map<string, Waiter>();
  private nextOrder = 1;
  /** Steps (not runs) whose acquire() waits now. */
  private stepWaiting = 0;
  private graceTimer: (() => void) | undefined;
  private stopped = false;
  /** Fast-path slots whose row is not written yet (some may have ended since). */
  private unwritten: FastHold[] = [];
  /** Fast-path slots whose row was written and that ended: their rows go. */
  private ended: FastHold[] = [];
  private holdsScheduled = false;
  /** Run slots held at the last stop (RecoveredQueues.held), until their run asks again. */
  private readonly kept = new Map<string, FastHold>();

  constructor(
    private readonly store: QueueStore,
    private readonly now: () => number,
    specs: readonly QueueSpec[],
    private readonly options: QueueManagerOptions = {},
  ) {
    for (const s of specs) this.define(s).seen.add(s);
  }

  /** Loads what the last owner left and records the current definitions. Call once, before
   *  any run executes. */
  async start(): Promise<void> {
    const now = this.now();
    const maxPeriod = Math.max(0, ...[...this.queues.values()].flatMap((q) => [q.spec.limits.rate?.periodMs ?? 0, q.spec.limits.key?.rate?.periodMs ?? 0]));
    const rec = this.store.recover(now - maxPeriod);
    this.nextOrder = rec.maxOrder + 1;
    for (const s of rec.starts) this.queues.get(s.queue)?.state.recordPastStart(s.key, s.at);
    for (const h of rec.held) {
      const q = this.queues.get(h.queue);
      // A queue no workflow declares any more: its runs go on without it.
      if (!q) {
        this.store.release(h.runId, h.step);
        continue;
      }
      q.state.hold(h.key);
      const kept = new FastHold(this, q, h.key, h.runId, h.step, h.order, h.at);
      kept.written = true;
      this.kept.set(idOf(h.runId, h.step), kept);
    }
    for (const w of rec.waiting) {
      const q = this.queues.get(w.queue);
      // A queue no workflow declares any more: its run asks again and is refused then.
      if (!q) continue;
      const waiter: Waiter = { ...w, granted: false, resolved: false, gaveUp: false, recovered: true };
      this.waiters.set(idOf(w.runId, w.step), waiter);
      // A rate limit counts a start when it grants: granted now, a waiter whose run asks again
      // only later would start its body then, outside the window counted (seed 5209279: 3
      // bodies at one instant with 2 per 5 s). So it rejoins the line, at its place among
      // those still waiting, when its run asks again. Without a rate limit a slot held
      // meanwhile costs no start: the waiter is granted now and keeps it.
      if (counted(q.spec.limits)) waiter.deferred = true;
      else q.state.enqueue(waiter);
    }
    if (rec.waiting.length > 0) {
      // On the engine's clock: a test engine's advance() ends the grace (a real 30 s timer
      // held the line of a manual-clock engine for 30 s of real time).
      const ms = this.options.recoveredGraceMs ?? DEFAULT_RECOVERED_GRACE_MS;
      if (this.options.setTimer) this.graceTimer = this.options.setTimer(now + ms, () => this.dropUnclaimed());
      else {
        const t = setTimeout(() => this.dropUnclaimed(), ms);
        t.unref?.();
        this.graceTimer = () => clearTimeout(t);
      }
    }
    await this.store.define([...this.queues.values()].map((q) => ({ name: q.spec.name, limits: q.spec.limits })), now);
    for (const q of this.queues.values()) this.pump(q);
  }

  stop(): void {
    this.stopped = true;
    this.graceTimer?.();
    for (const q of this.queues.values()) q.timer?.();
  }

  /** Some step (not a run's own slot) waits for a slot. */
  get hasStepWaiters(): boolean {
    return this.stepWaiting > 0;
  }

  /** Waits for a slot of the request's queue; the hold is released when the body ends. */
  acquire(req: SlotRequest, signal: AbortSignal): Promise<SlotHold> {
    let q: Queue;
    try {
      q = this.resolve(req.queue);
    } catch (err) {
      return Promise.reject(err);
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    const id = idOf(req.runId, req.step);
    let w = this.waiters.get(id);
    if (w && (!w.recovered || w.queue !== q.spec.name || w.key !== req.key)) {
      // The same step asking twice in one process, or with another queue than before a restart.
      this.forget(w);
      w = undefined;
    }
    if (w) {
      w.recovered = false;
      if (w.deferred) {
        w.deferred = false;
        q.state.enqueue(w);
      }
    } else {
      w = { queue: q.spec.name, key: req.key, runId: req.runId, step: req.step, order: this.nextOrder++, at: this.now(), granted: false, resolved: false, gaveUp: false, recovered: false, ...(req.priority ? { priority: req.priority } : {}) };
      this.waiters.set(id, w);
      q.state.enqueue(w);
    }
    const waiter = w;
    const p = new Promise<SlotHold>((resolve, reject) => {
      waiter.resolve = resolve;
      waiter.reject = reject;
      signal.addEventListener('abort', () => this.giveUp(q, waiter, signal.reason), { once: true });
      if (waiter.granted) this.hand(q, waiter);
      else this.pump(q);
      // Still waiting after the pump: its place is written, to survive a restart.
      if (!waiter.granted) void this.store.wait(waiter).catch(() => {});
    });
    if (req.step === RUN_SLOT || waiter.resolved) return p;
    this.stepWaiting++;
    const left = () => void this.stepWaiting--;
    p.then(left, left);
    return p;
  }

  /** The fast path: a slot at once, in memory, when one is free and nobody waits for the
   *  queue (tryStart's rules: never with a rate limit, whose grant must be durable before the
   *  body). Undefined: the step goes through acquire(), which waits or fails it (an unknown
   *  queue). The slot's row is written by the next group commit if the body still holds it
   *  then, so a synchronous body writes nothing and an async one two rows at most, batched. */
  tryAcquire(req: SlotRequest): SlotHold | undefined {
    if (this.stopped) return undefined;
    if (this.kept.size > 0) {
      const kept = this.kept.get(idOf(req.runId, req.step));
      if (kept) return this.kept.delete(idOf(req.runId, req.step)), kept;
    }
    const ref = req.queue;
    const q = this.queues.get(typeof ref === 'string' ? ref : ref.name);
    // A definition object not met yet: acquire() checks its limits against the known ones.
    if (!q || (typeof ref !== 'string' && !q.seen.has(ref))) return undefined;
    // A step recovered at start keeps its place: acquire() hands it back.
    if (this.waiters.size > 0 && this.waiters.has(idOf(req.runId, req.step))) return undefined;
    if (!q.state.tryStart(req.key)) return undefined;
    // `at` (the grant's time, shown by `tranquil queues`) is read when the row is written.
    const h = new FastHold(this, q, req.key, req.runId, req.step, this.nextOrder++, 0);
    this.unwritten.push(h);
    this.scheduleHolds();
    return h;
  }

  /** A slot now or never (a run's singleton or rate-limit slot, run-flow.ts): undefined when
   *  the queue's limits allow no start at once (nobody is put in line). A rate-limited grant
   *  is durable before the promise resolves, as acquire()'s. */
  grantNow(req: SlotRequest): Promise<SlotHold> | undefined {
    const id = idOf(req.runId, req.step);
    const kept = this.kept.get(id);
    if (kept) return this.kept.delete(id), Promise.resolve(kept);
    const q = this.resolve(req.queue);
    const before = this.waiters.get(id);
    if (before) this.forget(before);
    const w: Waiter = { queue: q.spec.name, key: req.key, runId: req.runId, step: req.step, order: this.nextOrder++, at: this.now(), granted: false, resolved: false, gaveUp: false, recovered: false };
    const p = new Promise<SlotHold>((resolve, reject) => {
      w.resolve = resolve;
      w.reject = reject;
    });
    this.waiters.set(id, w);
    q.state.enqueue(w);
    this.pump(q);
    if (w.granted) return p;
    this.waiters.delete(id);
    q.state.remove(w);
    return undefined;
  }

  /** The runs holding a slot of `queue` for `key` kept from the last stop (their run has not
   *  asked again yet). */
  keptRuns(queue: string, key: string): string[] {
    return [...this.kept.values()].filter((h) => h.q.spec.name === queue && h.key === key).map((h) => h.runId);
  }

  /** A run ended without asking for the slot it held at the last stop (a forced cancel). */
  dropKept(runId: string, step: string): void {
    if (this.kept.size === 0) return;
    const kept = this.kept.get(idOf(runId, step));
    if (!kept) return;
    this.kept.delete(idOf(runId, step));
    kept.release();
  }

  /** A run ended: places (or slots) recovered at start for its steps, which it will never
   *  ask for again, are freed now rather than at the grace's end. */
  runEnded(runId: string): void {
    if (this.waiters.size === 0) return;
    for (const w of [...this.waiters.values()]) if (w.recovered && w.runId === runId) this.forget(w);
  }

  /** A fast-path slot ended (FastHold.release). */
  endFast(h: FastHold): void {
    h.q.state.release(h.key);
    // A synchronous body ends in the turn it began: its entry is the last one, dropped now
    // (the line stays short and nothing of it reaches the batch).
    const u = this.unwritten;
    if (u.length > 0 && u[u.length - 1] === h) u.pop();
    if (h.written) {
      this.ended.push(h);
      this.scheduleHolds();
    }
    if (h.q.state.hasWaiters) this.pump(h.q);
  }

  private scheduleHolds(): void {
    if (this.holdsScheduled || this.stopped) return;
    this.holdsScheduled = true;
    this.store.writeHolds(this.takeHolds);
  }

  /** Called inside the group commit's transaction: the rows to write and to drop now. */
  private readonly takeHolds = (): HoldRows => {
    this.holdsScheduled = false;
    const add: QueuedStep[] = [];
    const now = this.now();
    for (const h of this.unwritten) {
      if (h.released) continue;
      h.written = true;
      if (h.at === 0) h.at = now;
      add.push(h);
    }
    this.unwritten = [];
    const drop = this.ended;
    this.ended = [];
    return { add, drop };
  };

  /** The step of `runId` waiting for a slot, if one is (for `why` and the run's explain). */
  waitOf(runId: string): QueueWait | undefined {
    for (const w of this.waiters.values()) {
      if (w.runId !== runId || w.granted || w.recovered) continue;
      const q = this.queues.get(w.queue)!;
      const st = q.state.stats(w.key);
      const perKey = q.spec.limits.key?.concurrency !== undefined;
      return {
        queue: w.queue, key: w.key, step: w.step, ahead: q.state.ahead(w),
        running: perKey ? st.keyRunning : st.running,
        limit: perKey ? q.spec.limits.key!.concurrency : q.spec.limits.concurrency,
      };
    }
    return undefined;
  }

  /** Every queue's limits and what runs and waits in it now (`tranquil queues`, the panel). */
  describe(): { name: string; limits: QueueLimits; running: number; waiting: number }[] {
    return [...this.queues.values()].map((q) => {
      const st = q.state.stats();
      return { name: q.spec.name, limits: q.spec.limits, running: st.running, waiting: st.waiting };
    });
  }

  private define(spec: QueueSpec): Queue {
    const known = this.queues.get(spec.name);
    if (known) {
      if (!sameLimits(known.spec.limits, spec.limits)) {
        throw new ValidationError(`queue '${spec.name}' is defined twice with different limits (${JSON.stringify(known.spec.limits)} and ${JSON.stringify(spec.limits)}): define it once and share it`);
      }
      return known;
    }
    const q: Queue = { spec: { name: spec.name, limits: spec.limits }, state: new QueueState<Waiter>(spec.limits), grants: 0, seen: new WeakSet() };
    this.queues.set(spec.name, q);
    return q;
  }

  private resolve(ref: QueueSpec | string): Queue {
    if (typeof ref !== 'string') {
      const known = this.queues.has(ref.name);
      const q = this.define(ref);
      q.seen.add(ref);
      if (!known) void this.store.define([{ name: q.spec.name, limits: q.spec.limits }], this.now()).catch(() => {});
      return q;
    }
    const q = this.queues.get(ref);
    if (!q) throw new ValidationError(`unknown queue '${ref}': declare it in the workflow's options (workflow(name, { queues: [queue('${ref}', {...})] }, ...)) or pass the queue itself`);
    return q;
  }

  /** Starts every waiter the queue's limits allow now; arms a timer for a rate window. */
  private pump(q: Queue): void {
    if (this.stopped) return;
    for (;;) {
      const now = this.now();
      // A counted start is pending until its body may begin (hand): a grant's durable write
      // (or a paused process) can take longer than a rate period.
      const pick = q.state.take(now, true);
      if (pick.type === 'none') return;
      if (pick.type === 'later') return this.wakeAt(q, pick.at);
      const w = pick.waiter;
      w.granted = true;
      w.grantedAt = now;
      // A recovered waiter keeps its slot until its run asks again (or its grace ends).
      if (w.resolve) this.hand(q, w);
    }
  }

  private wakeAt(q: Queue, at: number): void {
    if (q.timer && q.timerAt !== undefined && q.timerAt <= at) return;
    q.timer?.();
    q.timerAt = at;
    const fire = () => {
      q.timer = undefined;
      q.timerAt = undefined;
      this.pump(q);
    };
    if (this.options.setTimer) q.timer = this.options.setTimer(at, fire);
    else {
      const t = setTimeout(fire, Math.max(1, at - this.now()));
      t.unref?.();
      q.timer = () => clearTimeout(t);
    }
  }

  /** The grant is written (out of the line, into a slot, counted for the rate limit) before
   *  the body of a rate-limited queue may run: a crash after it never lets the limit be exceeded. */
  private hand(q: Queue, w: Waiter): void {
    this.waiters.delete(idOf(w.runId, w.step));
    const isCounted = counted(q.spec.limits);
    // Starts older than every period of the queue count for nothing: dropped now and then.
    if (isCounted && ++q.grants % PRUNE_EVERY === 0) {
      this.store.prune(q.spec.name, this.now() - Math.max(q.spec.limits.rate?.periodMs ?? 0, q.spec.limits.key?.rate?.periodMs ?? 0));
    }
    // Stored as the start until the body's own time replaces it (started(), below): a crash
    // in between leaves the earlier time, which is never after the body's.
    const grantedAt = w.grantedAt ?? this.now();
    const written = this.store.grant(w, grantedAt, isCounted);
    if (!isCounted) {
      // No rate limit: a grant lost in a crash loses nothing (the next owner frees every slot
      // anyway), so the body need not wait for its write (it rides the next group commit).
      written.catch(() => {});
      const hold = this.holdOf(q, w, grantedAt);
      if (w.gaveUp) return hold.release();
      w.resolved = true;
      return w.resolve!(hold);
    }
    written.then(
      () => {
        // The body begins now: the limiter's pending start counts from now (and `startedAt`
        // says so), not from the grant, however long the write took.
        const at = this.started(q, w, grantedAt);
        const hold = this.holdOf(q, w, at);
        if (w.gaveUp) return hold.release();
        w.resolved = true;
        w.resolve!(hold);
      },
      (err: unknown) => {
        this.holdOf(q, w, this.started(q, w, grantedAt)).release();
        w.reject!(err);
      },
    );
  }

  /** A counted grant's body begins (or never will): its pending start is fixed at now, in
   *  memory and (riding the next commit) in the file. */
  private started(q: Queue, w: Waiter, grantedAt: number): number {
    const at = Math.max(grantedAt, this.now());
    q.state.confirmStart(w.key, at);
    if (at !== grantedAt) this.store.restamp(q.spec.name, w.key, grantedAt, at);
    // While pending, the start held the window shut with no timer armed (take: none).
    if (q.state.hasWaiters) this.pump(q);
    return at;
  }

  private holdOf(q: Queue, w: Waiter, grantedAt: number): SlotHold {
    let released = false;
    return {
      grantedAt,
      release: () => {
        if (released) return;
        released = true;
        this.store.release(w.runId, w.step);
        q.state.release(w.key);
        this.pump(q);
      },
    };
  }

  private giveUp(q: Queue, w: Waiter, reason: unknown): void {
    if (w.resolved) return; // the body runs: its end releases the slot
    w.gaveUp = true;
    if (w.granted) return void w.reject!(reason); // the grant's write ends it (hand)
    this.forget(w);
    w.reject!(reason);
  }

  private forget(w: Waiter): void {
    this.waiters.delete(idOf(w.runId, w.step));
    const q = this.queues.get(w.queue);
    if (!q) return;
    if (w.granted) q.state.release(w.key);
    else q.state.remove(w);
    if (!this.stopped) this.store.leave(w.runId, w.step);
    this.pump(q);
  }

  /** Recovered waiters whose run did not ask again in time: their place (or slot) is freed. */
  private dropUnclaimed(): void {
    for (const w of [...this.waiters.values()]) if (w.recovered) this.forget(w);
  }
}

/** A slot taken on the fast path (QueueManager.tryAcquire); also the row it writes. */
class FastHold implements SlotHold, QueuedStep {
  released = false;
  /** Its row is in the file (takeHolds wrote it): the end drops it. */
  written = false;

  constructor(
    private readonly m: QueueManager,
    readonly q: Queue,
    readonly key: string,
    readonly runId: string,
    readonly step: string,
    readonly order: number,
    public at: number,
  ) {}

  get queue(): string {
    return this.q.spec.name;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.m.endFast(this);
  }
}

/** One attempt of a queued step: waits for a slot, runs the attempt, releases the slot. A
 *  step log without queues (slot() absent), or an unknown queue, fails the
 *  step without retrying. */
export async function queuedAttempt(
  log: StepLog, req: SlotRequest, signal: AbortSignal, attempt: (hold: SlotHold) => Promise<AttemptResult>,
): Promise<AttemptResult> {
  if (!log.slot) {
    return { ok: false, terminal: true, error: toErrorInfo(new ValidationError(`step '${req.step}': queues are not available here (this step log serves no queues)`)) };
  }
  let hold: SlotHold;
  try {
    hold = await log.slot(req, signal);
  } catch (err) {
    return { ok: false, terminal: err instanceof ValidationError, error: toErrorInfo(err) };
  }
  try {
    return await attempt(hold);
  } finally {
    hold.release();
  }
}

/** The queues the workflows declare, each name once (the same name with other limits is refused). */
export function queueSpecsOf(defs: readonly WorkflowDefinition[]): QueueSpec[] {
  const names = new QueueNames();
  for (const d of defs) {
    const c = names.conflict(d);
    if (c) throw new ValidationError(`queue '${c.queue}' is defined twice with different limits (workflows '${c.by}' and '${d.name}'): define it once and share it`);
    names.add(d);
  }
  return names.specs();
}
