// Wall clock. Timers are chained in chunks of at most CHECK_MS and re-checked against
// Date.now() at each link: Node timers run on the monotonic clock, which on Linux stops
// while the machine is suspended, so a timer armed for 09:00 before a laptop slept would
// otherwise fire late by the whole sleep. A link that finds wall time far ahead of (or
// behind) what it waited reports a jump to onJump listeners, which re-scan at once.
import type { Clock } from '../../ports/clock.ts';

/** Longest single setTimeout; bounds how late a wake after sleep can be noticed. */
const CHECK_MS = 15_000;
/** Wall-clock drift beyond this, compared with the wait asked for, counts as a jump. */
const JUMP_MS = 5_000;

export class SystemClock implements Clock {
  private readonly jumpListeners = new Set<(gapMs: number) => void>();

  now(): number {
    return Date.now();
  }

  setTimer(at: number, fn: () => void): () => void {
    let handle: NodeJS.Timeout | undefined;
    const arm = () => {
      const delay = Math.max(0, at - Date.now());
      if (delay <= CHECK_MS) {
        handle = setTimeout(fn, delay);
        return;
      }
      const armedAt = Date.now();
      const armedMono = performance.now();
      handle = setTimeout(() => {
        const gap = Date.now() - armedAt - (performance.now() - armedMono);
        if (Math.abs(gap) > JUMP_MS) for (const l of this.jumpListeners) l(gap);
        arm();
      }, CHECK_MS);
    };
    arm();
    return () => clearTimeout(handle);
  }

  onJump(fn: (gapMs: number) => void): () => void {
    this.jumpListeners.add(fn);
    return () => this.jumpListeners.delete(fn);
  }
}
