// Named fault points: places in the SQLite adapter where a test makes the engine "die" or
// stop and wait, so crash recovery is tested at every commit boundary (DBOS debug points).
//
// Production passes no registry: each hook is `this.o.faults?.hit('name')`, one property
// check when nothing is armed. A test arms a point on a FaultPoints it hands to the executor
// (createTestEngine({ faults })):
//   crash  - at the nth hit the engine is abandoned as if its process died there: the
//            executor's abandon hook stops it (no dispatch, no timer, no lease heartbeat,
//            connection closed without cleanup, so no further writes), and the hook's
//            caller stops: an async point's promise rejects with FaultCrash, a sync point
//            returns at once, a point inside a transaction throws (the transaction rolls back).
//   pause  - at the next hit the caller waits until the test calls release(); async
//            points only (a sync point cannot wait).
// The checkpoint worker (checkpoint-worker.ts) runs in another isolate and has no registry:
// its one point is armed by env, TRANQUIL_FAULT_CHECKPOINT=hold-before-mark (the worker holds
// after its checkpoint changed the file, before the mark is written; a test SIGKILLs there).
// Adding a point: name it in FAULT_POINTS (and ASYNC_POINTS if its caller can await), put
// one hook line where it belongs. Hook forms:
//   async:          const f = this.o.faults?.hit('x'); if (f) await f;
//   sync:           if (this.o.faults?.hit('x')) return;
//   in transaction: if (this.o.faults?.hit('x')) throw new FaultCrash('x');

export const FAULT_POINTS = [
  'after-lease-claim', // start(): the owner lease is ours, recovery has not run
  'before-step-commit', // a step's journal entry is about to be queued for commit
  'after-step-commit', // a step's entry committed, the run has not moved on
  'mid-emit', // inside the transaction of ctx.emit: journal entry written, event not yet
  'after-timer-write', // due runs claimed (status running, wake cleared) but not dispatched
  'before-outcome-commit', // a session ended (suspend/finish); its new run state not queued
  'mid-batch', // inside a group-commit transaction, every write applied, before COMMIT
  'after-child-start', // a child run (step.start/invoke) committed; the parent's step not recorded
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

/** Points whose caller awaits the hook, so 'pause' works there. */
export const ASYNC_POINTS: ReadonlySet<FaultPoint> = new Set(['after-lease-claim', 'before-step-commit', 'after-step-commit', 'before-outcome-commit', 'after-child-start']);

/** What a crashed engine's interrupted code paths see. Never a user-facing error. */
export class FaultCrash extends Error {
  constructor(readonly point: FaultPoint | 'now') {
    super(`fault point '${point}': engine crashed here (test fault injection)`);
    this.name = 'FaultCrash';
  }
}

type Armed = { kind: 'crash'; remaining: number } | { kind: 'pause'; reached: () => void; released: Promise<void> };

export class FaultPoints {
  private readonly armed = new Map<FaultPoint, Armed>();
  private readonly crashHooks: (() => void)[] = [];
  private crashPromise: Promise<never> | undefined;
  /** Where the engine crashed, once it did. */
  crashedAt: FaultPoint | 'now' | undefined;
  /** Hits per point (armed or not), for coverage figures. */
  readonly hits = new Map<FaultPoint, number>();

  /** Crash at the nth hit of `point` from now (1 = the next one). */
  crash(point: FaultPoint, nth = 1): this {
    if (!FAULT_POINTS.includes(point)) throw new RangeError(`unknown fault point '${point}'`);
    if (!Number.isInteger(nth) || nth < 1) throw new RangeError(`crash('${point}', nth): nth must be an integer >= 1`);
    this.armed.set(point, { kind: 'crash', remaining: nth });
    return this;
  }

  /** Pause the next hit of `point` until release(); `reached` resolves when it is hit. */
  pause(point: FaultPoint): { reached: Promise<void>; release: () => void } {
    if (!ASYNC_POINTS.has(point)) throw new RangeError(`fault point '${point}' is synchronous: it can crash, not pause`);
    let reached!: () => void;
    let release!: () => void;
    const onReached = new Promise<void>((r) => (reached = r));
    const released = new Promise<void>((r) => (release = r));
    this.armed.set(point, { kind: 'pause', reached, released });
    return { reached: onReached, release };
  }

  disarm(point?: FaultPoint): void {
    if (point) this.armed.delete(point);
    else this.armed.clear();
  }

  /** The executor registers how it abandons itself. */
  onCrash(fn: () => void): void {
    this.crashHooks.push(fn);
  }

  /** Crash the engine right now, wherever it is (between two hooks). */
  crashNow(): void {
    this.die('now');
  }

  /** The hook. undefined = carry on; a promise = await it (pause) or stop (crash; it rejects). */
  hit(point: FaultPoint): Promise<void> | undefined {
    this.hits.set(point, (this.hits.get(point) ?? 0) + 1);
    if (this.crashPromise) return this.crashPromise; // already dead: nothing runs on
    const a = this.armed.get(point);
    if (!a) return undefined;
    if (a.kind === 'pause') {
      this.armed.delete(point);
      a.reached();
      return a.released;
    }
    if (--a.remaining > 0) return undefined;
    this.armed.delete(point);
    return this.die(point);
  }

  private die(point: FaultPoint | 'now'): Promise<never> {
    if (this.crashPromise) return this.crashPromise;
    this.crashedAt = point;
    const p = Promise.reject(new FaultCrash(point));
    p.catch(() => {}); // a sync hook drops it: not an unhandled rejection
    this.crashPromise = p;
    for (const fn of this.crashHooks) fn();
    return p;
  }
}
