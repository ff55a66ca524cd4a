// Wall clock. Long timers are chained because setTimeout caps at ~24.8 days.
import type { Clock } from '../../ports/clock.ts';

const MAX_TIMEOUT = 2 ** 31 - 1;

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  setTimer(at: number, fn: () => void): () => void {
    let handle: NodeJS.Timeout | undefined;
    const arm = () => {
      const delay = Math.max(0, at - Date.now());
      handle = setTimeout(delay > MAX_TIMEOUT ? arm : fn, Math.min(delay, MAX_TIMEOUT));
    };
    arm();
    return () => clearTimeout(handle);
  }
}
