// The in-process Scheduler: ONE timer armed through the Clock at the earliest time any
// source has something due; a scan claims every source, then re-arms at the earliest next
// time they report. A clock jump (laptop sleep, NTP step) makes the armed timer's "when"
// stale, so it re-scans at once. Catch-up is bounded: a source that claimed a full batch is
// not re-armed but claimed again once the caller's backlog is down to half a batch, so a
// restart with many overdue timers streams through bounded memory.
import type { Clock } from '../ports/clock.ts';
import type { Scheduler, TimerClaim, TimerSource } from '../ports/scheduler.ts';

/** Items of a source's backlog kind (due runs) claimed per scan. */
export const DUE_BATCH = 2000;
/** A scan that failed on storage (disk full, a lock held too long) is tried again after this. */
const RETRY_MS = 1000;

export interface TimerSchedulerOptions {
  clock: Clock;
  /** Claim size per source and scan; default DUE_BATCH. */
  batch?: number;
}

interface Registered {
  source: TimerSource;
  /** Its last claim filled the batch: claim again once the backlog drains. */
  more: boolean;
}

const DONE = Promise.resolve();

export class TimerScheduler implements Scheduler {
  private readonly clock: Clock;
  private readonly batch: number;
  private readonly sources = new Set<Registered>();
  private timerAt: number | undefined;
  private cancelTimer: (() => void) | undefined;
  private unsubscribeJump: (() => void) | undefined;
  private stopped = false;
  /** The retry of a failed claim, until it runs (at most one). */
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(o: TimerSchedulerOptions) {
    this.clock = o.clock;
    this.batch = o.batch ?? DUE_BATCH;
  }

  get retrying(): boolean {
    return this.retryTimer !== undefined;
  }

  get catchingUp(): boolean {
    for (const r of this.sources) if (r.more) return true;
    return false;
  }

  register(source: TimerSource): () => void {
    const r: Registered = { source, more: false };
    this.sources.add(r);
    return () => void this.sources.delete(r);
  }

  start(): Promise<void> {
    this.stopped = false;
    this.unsubscribeJump?.();
    this.unsubscribeJump = this.clock.onJump?.(() => void this.scan());
    return this.scan();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribeJump?.();
    this.unsubscribeJump = undefined;
    this.disarm();
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  armAt(at: number): void {
    if (this.stopped) return;
    if (this.timerAt !== undefined && this.timerAt <= at) return;
    this.cancelTimer?.();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(at, () => {
      this.timerAt = undefined;
      this.cancelTimer = undefined;
      void this.scan();
    });
  }

  rescan(): Promise<void> {
    return this.scan();
  }

  claimMoreIfDrained(): void {
    if (this.stopped) return;
    let again = false;
    for (const r of this.sources) {
      if (!r.more || (r.source.backlog?.() ?? 0) > this.batch / 2) continue;
      r.more = false;
      again = true;
    }
    if (again) setImmediate(() => void this.scan());
  }

  private disarm(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = undefined;
  }

  /** Claims every source at the current time, then re-arms. Synchronous when every source
   *  is; the SQLite claim is a write of its group commit, so it resolves once that is durable. */
  private scan(): Promise<void> {
    if (this.stopped) return DONE;
    const now = this.clock.now();
    const order = [...this.sources];
    let claims: (TimerClaim | Promise<TimerClaim>)[];
    try {
      claims = order.map((r) => r.source.claimDue(now, this.batch));
    } catch (err) {
      this.retryLater(err);
      return DONE;
    }
    if (claims.some((c) => c instanceof Promise)) {
      return Promise.all(claims).then(
        (done) => this.settle(order, done),
        (err) => this.retryLater(err),
      );
    }
    this.settle(order, claims as TimerClaim[]);
    return DONE;
  }

  private settle(order: Registered[], claims: TimerClaim[]): void {
    // A source may have stopped the engine mid-claim (a fault point): nothing more happens.
    if (this.stopped) return;
    // A claim went through: whatever a failed one left due is claimed (or re-armed) now.
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    let next: number | undefined;
    let more = false;
    claims.forEach((c, i) => {
      if (c.more) {
        order[i]!.more = more = true;
      } else if (c.nextAt !== undefined && (next === undefined || c.nextAt < next)) {
        next = c.nextAt;
      }
    });
    if (more) {
      // No re-arm while catching up: the next claim comes as the backlog drains.
      this.claimMoreIfDrained();
      return;
    }
    this.disarm();
    if (next !== undefined) this.armAt(next);
  }

  private retryLater(err: unknown): void {
    if (this.stopped) return; // a claim cut short by stop(): nothing to retry
    // A storage failure claimed nothing: try again soon (a real timer: time need not pass).
    console.error(`tranquil: due timers could not be claimed (will retry): ${(err as Error)?.message ?? err}`);
    // Kept (`retrying`) until it ran: the claim it makes up for is due now, so an engine
    // waiting for idle waits for it too. Left untracked, a test engine's idle() resolved with
    // due runs and schedule slots unclaimed, and its clock moved on past them (seed 6130219).
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.scan();
    }, RETRY_MS);
    this.retryTimer.unref();
  }
}
