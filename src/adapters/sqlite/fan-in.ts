// Fan-in of child ends (docs/children.md). Each child's end wakes its parent, and a woken
// parent replays its whole journal. Ends that arrive while the parent is queued or executing
// already share one replay; but when children end one by one, each a little after the
// parent's last replay, a parent with a large journal (a fan-out of 1,000 children) replayed
// back to back, once per end or two: its replay work grew with children x journal. So a
// parent whose last execution was slow and that still has unfinished children waits a little
// (a multiple of that execution, capped) before it runs again, and every end arriving
// meanwhile is served by that one replay. A parent with a fast replay is woken at once
// (a single step.invoke pays no latency). The hold is in memory only: the end is committed
// before any wake, and a crash resumes a waiting run with an unconsumed end at start-up.

/** An execution under this is not held for: the latency would cost more than the replay. */
export const HOLD_MIN_EXECUTION_MS = 10;
/** The hold is this many times the parent's last execution (replay work <= 1/(1+k) of the wall time). */
export const HOLD_FACTOR = 2;
/** Longest hold, whatever the replay costs. */
export const HOLD_MAX_MS = 1000;

export class FanInHold {
  private readonly lastMs = new Map<string, number>();
  private readonly held = new Map<string, ReturnType<typeof setTimeout>>();

  /** `wake`: runs the parent (the executor's dispatch); `hasOpenChildren`: whether more ends may follow. */
  constructor(private readonly wake: (runId: string) => void, private readonly hasOpenChildren: (runId: string) => boolean) {}

  /** After each execution of a run that suspended: how long it took. */
  executed(runId: string, ms: number): void {
    if (ms >= HOLD_MIN_EXECUTION_MS) this.lastMs.set(runId, ms);
    else this.lastMs.delete(runId);
  }

  /** The run ended (or is gone): nothing is held for it any more. */
  forget(runId: string): void {
    this.lastMs.delete(runId);
    const t = this.held.get(runId);
    if (t !== undefined) clearTimeout(t);
    this.held.delete(runId);
  }

  /** Whether a child's end waking `runId` should wait (a slow replay, more children to come). */
  wanted(runId: string): boolean {
    return this.held.has(runId) || (this.lastMs.has(runId) && this.hasOpenChildren(runId));
  }

  /** Holds the wake of `runId` if wanted: true when it will come later (or is already due). */
  hold(runId: string): boolean {
    if (this.held.has(runId)) return true;
    if (!this.wanted(runId)) return false;
    const ms = Math.min(HOLD_MAX_MS, HOLD_FACTOR * this.lastMs.get(runId)!);
    const t = setTimeout(() => {
      this.held.delete(runId);
      this.wake(runId);
    }, ms);
    t.unref?.();
    this.held.set(runId, t);
    return true;
  }

  /** Wakes waiting for their time (the engine is busy until they ran). */
  get pending(): number {
    return this.held.size;
  }

  clear(): void {
    for (const t of this.held.values()) clearTimeout(t);
    this.held.clear();
    this.lastMs.clear();
  }
}
