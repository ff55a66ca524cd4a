// Flow control of one queue, pure (no clock, no I/O: `now` is passed in). Who may start next
// among the waiters of a queue: at most `concurrency` bodies at once in the whole queue and
// at most `key.concurrency` per key, at most `limit` starts in ANY window of `period`
// (a sliding log: no double burst at a period edge, as a fixed window allows), and fair
// service across keys (round-robin: a key with 1,000 waiting and a key with 1 alternate).

export interface RateLimit {
  limit: number;
  periodMs: number;
}

/** One level of limits (the whole queue, or each key). Absent: unbounded. */
export interface Limits {
  concurrency?: number;
  rate?: RateLimit;
}

export interface QueueLimits extends Limits {
  /** Limits applied to each key separately (per user, per tenant). */
  key?: Limits;
}

/** A named queue with its limits (sdk/queue.ts's QueueDefinition is one). */
export interface QueueSpec {
  readonly name: string;
  readonly limits: QueueLimits;
}

/** A step (or a run: `step` '') waiting for a slot, as `why` tells it. `running` and `limit` are of the level
 *  that binds (the key's when the queue limits each key's concurrency, else the queue's). */
export interface QueueWait {
  queue: string;
  key: string;
  step: string;
  running: number;
  limit?: number;
  ahead: number;
}

export function describeQueueWait(q: QueueWait): string {
  const key = q.key === '' ? '' : ` for key '${q.key}'`;
  const running = q.limit === undefined ? `${q.running} running` : `${q.running} of ${q.limit} running`;
  return `queued in '${q.queue}'${key}: ${running}, ${q.ahead} ahead`;
}

/** A start granted whose body has not begun yet: it counts in every window until confirmed
 *  (StartLog.confirm), so however late its body begins, no window holds more than the limit. */
const PENDING = Infinity;

/** The starts of the last `periodMs`, oldest first (a sliding log); pending ones last. */
export class StartLog {
  private readonly at: number[] = [];

  /** When the next start is allowed (<= now: now). */
  nextAllowed(rate: RateLimit | undefined, now: number): number {
    if (!rate) return now;
    this.prune(rate, now);
    if (this.at.length < rate.limit) return now;
    // The window [t, t + period) holding `limit` starts ends when its oldest leaves it
    // (never, while that one is pending: Infinity).
    return this.at[this.at.length - rate.limit]! + rate.periodMs;
  }

  /** `t`: when the start happened, or PENDING. */
  add(t: number, rate: RateLimit | undefined): void {
    if (!rate) return;
    // Kept sorted: a start loaded from storage may be older than one already here.
    let i = this.at.length;
    while (i > 0 && this.at[i - 1]! > t) i--;
    this.at.splice(i, 0, t);
    if (t !== PENDING) this.prune(rate, t);
  }

  /** A pending start's body began at `t`: it counts from then. */
  confirm(t: number, rate: RateLimit | undefined): void {
    if (!rate) return;
    const i = this.at.lastIndexOf(PENDING);
    if (i >= 0) this.at.splice(i, 1);
    this.add(t, rate);
  }

  get size(): number {
    return this.at.length;
  }

  private prune(rate: RateLimit, now: number): void {
    let drop = 0;
    while (drop < this.at.length && this.at[drop]! <= now - rate.periodMs) drop++;
    // Never fewer than `limit` kept: those are what nextAllowed reads.
    drop = Math.min(drop, Math.max(0, this.at.length - rate.limit));
    if (drop > 0) this.at.splice(0, drop);
  }
}

/** A waiter as the queue orders it: `priority` first (higher first; absent: 0), then `order`,
 *  its durable place (smaller first). */
export interface Waiting {
  order: number;
  key: string;
  priority?: number;
}

/** Whether `a` goes before `b` in line. */
function before(a: Waiting, b: Waiting): boolean {
  const pa = a.priority ?? 0;
  const pb = b.priority ?? 0;
  return pa !== pb ? pa > pb : a.order < b.order;
}

interface KeyState<W extends Waiting> {
  running: number;
  /** When it was last served (a tick of take); -1: never. */
  served: number;
  starts: StartLog;
  waiters: W[];
}

/** Idle keys a queue keeps before it drops them (QueueState.forget). */
const IDLE_KEYS = 1024;

export type Pick<W> = { type: 'start'; waiter: W } | { type: 'later'; at: number } | { type: 'none' };

export class QueueState<W extends Waiting> {
  private running = 0;
  private readonly starts = new StartLog();
  private readonly keys = new Map<string, KeyState<W>>();
  /** Keys with waiters, in the order they came. */
  private ring: string[] = [];
  private tick = 0;

  constructor(public limits: QueueLimits) {}

  /** Adds a waiter at its place (priority, then order) within its key (a restart re-adds them
   *  in any order). */
  enqueue(w: W): void {
    const k = this.keyState(w.key);
    let i = k.waiters.length;
    while (i > 0 && before(w, k.waiters[i - 1]!)) i--;
    k.waiters.splice(i, 0, w);
    if (k.waiters.length === 1) this.ring.push(w.key);
  }

  /** Removes a waiter that gave up (cancelled, engine stopping). */
  remove(w: W): boolean {
    const k = this.keys.get(w.key);
    const i = k ? k.waiters.indexOf(w) : -1;
    if (!k || i < 0) return false;
    k.waiters.splice(i, 1);
    if (k.waiters.length === 0) this.dropFromRing(w.key);
    this.forget(w.key);
    return true;
  }

  /** The next waiter allowed to start now (taken from the queue, its slot counted), the time
   *  the first one will be (a rate limit binds), or none (nobody waits, or all slots busy, or
   *  the rate window waits for a pending start's confirmStart).
   *  `pending`: the start is counted as pending (in every window) until confirmStart says when
   *  its body began: for a caller whose body begins only later (a durable write first), so a
   *  late body never exceeds the limit. Without it the start counts at `now`. */
  take(now: number, pending = false): Pick<W> {
    const top = this.limits;
    if (this.ring.length === 0) return { type: 'none' };
    if (top.concurrency !== undefined && this.running >= top.concurrency) return { type: 'none' };
    const globalAt = this.starts.nextAllowed(top.rate, now);
    if (globalAt === PENDING) return { type: 'none' };
    if (globalAt > now) return { type: 'later', at: globalAt };
    let later = Infinity;
    // The key whose first waiter has the highest priority; among equals, round-robin as "least
    // recently served first": a key that arrives while another is being served goes before
    // that key's next turn (a key never served counts as served longest ago).
    let best: KeyState<W> | undefined;
    let bestIdx = -1;
    for (let idx = 0; idx < this.ring.length; idx++) {
      const k = this.keys.get(this.ring[idx]!)!;
      if (best) {
        const p = k.waiters[0]!.priority ?? 0;
        const bp = best.waiters[0]!.priority ?? 0;
        if (p < bp || (p === bp && k.served >= best.served)) continue;
      }
      if (top.key?.concurrency !== undefined && k.running >= top.key.concurrency) continue;
      const keyAt = k.starts.nextAllowed(top.key?.rate, now);
      if (keyAt > now) {
        later = Math.min(later, keyAt);
        continue;
      }
      best = k;
      bestIdx = idx;
    }
    if (!best) return later === Infinity ? { type: 'none' } : { type: 'later', at: later };
    const waiter = best.waiters.shift()!;
    this.started(best, pending ? PENDING : now);
    best.served = ++this.tick;
    if (best.waiters.length === 0) this.ring.splice(bestIdx, 1);
    return { type: 'start', waiter };
  }

  /** Whether a body of `key` may start at once without queueing (then counted as running):
   *  nobody waits anywhere in the queue (so it passes no one, and fairness is untouched),
   *  both concurrency levels have room, and the queue has no rate limit (a counted start must
   *  be durable before its body: the caller's slow path). The step path's fast case. */
  tryStart(key: string): boolean {
    const top = this.limits;
    if (this.ring.length > 0 || top.rate !== undefined || top.key?.rate !== undefined) return false;
    if (top.concurrency !== undefined && this.running >= top.concurrency) return false;
    const k = this.keyState(key);
    if (top.key?.concurrency !== undefined && k.running >= top.key.concurrency) return false;
    this.running++;
    k.running++;
    k.served = ++this.tick;
    return true;
  }

  /** A holder found at start (a run's own slot, kept across a restart): counted as running
   *  whatever the limits now say (they may have been lowered meanwhile). */
  hold(key: string): void {
    this.running++;
    this.keyState(key).running++;
  }

  /** Someone waits for a slot (a release must look for the next). */
  get hasWaiters(): boolean {
    return this.ring.length > 0;
  }

  /** A start that happened before (loaded from storage): counts against the rate limits. */
  recordPastStart(key: string, at: number): void {
    this.starts.add(at, this.limits.rate);
    this.keyState(key).starts.add(at, this.limits.key?.rate);
    this.forget(key);
  }

  /** A start taken as pending (take(now, true)) whose body has not begun (loaded from storage). */
  recordPendingStart(key: string): void {
    this.starts.add(PENDING, this.limits.rate);
    this.keyState(key).starts.add(PENDING, this.limits.key?.rate);
  }

  /** The body of a start taken as pending began at `at` (or never will: then `at` is now). */
  confirmStart(key: string, at: number): void {
    this.starts.confirm(at, this.limits.rate);
    this.keyState(key).starts.confirm(at, this.limits.key?.rate);
  }

  /** A body holding a slot ended. */
  release(key: string): void {
    const k = this.keys.get(key);
    if (this.running > 0) this.running--;
    if (k && k.running > 0) k.running--;
    this.forget(key);
  }

  /** The keys' turns (when each was last served) and the tick: with them a queue rebuilt
   *  from stored state (a Restate virtual object, queue-snapshot.ts) keeps its round-robin. */
  turns(): { tick: number; served: [string, number][] } {
    const served: [string, number][] = [];
    for (const [key, k] of this.keys) if (k.served >= 0) served.push([key, k.served]);
    return { tick: this.tick, served };
  }

  /** Restores what turns() gave. */
  restoreTurns(t: { tick: number; served: readonly (readonly [string, number])[] }): void {
    this.tick = Math.max(this.tick, t.tick);
    for (const [key, served] of t.served) this.keyState(key).served = served;
  }

  /** For `why` and `queues describe`: running and waiting, in the queue and for `key`. */
  stats(key?: string): { running: number; waiting: number; keyRunning: number; keyWaiting: number } {
    let waiting = 0;
    for (const k of this.keys.values()) waiting += k.waiters.length;
    const k = key === undefined ? undefined : this.keys.get(key);
    return { running: this.running, waiting, keyRunning: k?.running ?? 0, keyWaiting: k?.waiters.length ?? 0 };
  }

  /** How many waiters of `w`'s key are ahead of it. */
  ahead(w: W): number {
    const k = this.keys.get(w.key);
    const i = k ? k.waiters.indexOf(w) : -1;
    return i < 0 ? 0 : i;
  }

  private started(k: KeyState<W>, at: number): void {
    this.running++;
    k.running++;
    this.starts.add(at, this.limits.rate);
    k.starts.add(at, this.limits.key?.rate);
  }

  private keyState(key: string): KeyState<W> {
    let k = this.keys.get(key);
    if (!k) this.keys.set(key, (k = { running: 0, served: -1, starts: new StartLog(), waiters: [] }));
    return k;
  }

  private dropFromRing(key: string): void {
    const idx = this.ring.indexOf(key);
    if (idx >= 0) this.ring.splice(idx, 1);
  }

  /** A key with nothing running, waiting or rate-limited is dropped (keys are unbounded), once
   *  more than IDLE_KEYS are known: below that an idle key's state is kept, so a key used
   *  again and again (the step path) does not rebuild it every time. */
  private forget(key: string): void {
    if (this.keys.size <= IDLE_KEYS) return;
    const k = this.keys.get(key);
    if (k && k.running === 0 && k.waiters.length === 0 && k.starts.size === 0) this.keys.delete(key);
  }
}
