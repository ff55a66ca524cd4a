// Scheduler: when due work is claimed. One armed timer at the earliest due time any source
// knows of, a re-scan on clock jumps, and a bounded catch-up: a source that claimed a full
// batch says `more` and is claimed again once the caller has worked its backlog down.
// The in-process implementation (src/runtime/timer-scheduler.ts) arms a Clock timer; a
// backend with durable timers of its own (Restate) can implement this port natively.

/** What one claim of a source found. */
export interface TimerClaim {
  /** The source claimed a full batch: more are due now (a catch-up after downtime). */
  more: boolean;
  /** When this source next has something due, if anything (ignored while `more`). */
  nextAt?: number;
}

/** Something that has due work: due runs, schedule slots. It claims durably and hands what it
 *  claimed on (dispatch, forward) itself; the scheduler only decides when to ask. */
export interface TimerSource {
  /** Claims what is due at `now`, at most `batch` items of a backlog kind. May be async
   *  (a store that commits asynchronously); a throw or rejection is retried shortly. */
  claimDue(now: number, batch: number): TimerClaim | Promise<TimerClaim>;
  /** Claimed items the caller has not started yet; a source that said `more` is claimed
   *  again only once this is at most half a batch. Absent = no backlog of its own. */
  backlog?(): number;
}

export interface Scheduler {
  /** Adds a source (before start, or later: it is claimed at the next scan). Returns its removal. */
  register(source: TimerSource): () => void;
  /** Watches clock jumps and runs the first scan (the catch-up); resolves when that scan ends. */
  start(): Promise<void>;
  /** Disarms the timer and stops watching; nothing is claimed after this. */
  stop(): void;
  /** Something comes due at `at`: arms the one timer there, unless it is armed earlier already. */
  armAt(at: number): void;
  /** Scans every source now (a wall-clock jump, a resume signal); resolves when the scan ends. */
  rescan(): Promise<void>;
  /** The caller's backlog shrank: a source that said `more` is claimed again if it is drained enough. */
  claimMoreIfDrained(): void;
  /** A source said `more` and has not been claimed again yet: there is work not yet claimed. */
  readonly catchingUp: boolean;
  /** A claim failed (storage) and its retry, on a real timer, has not run yet: what was due
   *  is not claimed yet, though no time needs to pass for it (an engine that waits for idle
   *  counts this as work). */
  readonly retrying: boolean;
}
