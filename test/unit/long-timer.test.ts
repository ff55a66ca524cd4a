// Timers for any accepted duration: Node's setTimeout fires at once (TimeoutOverflowWarning)
// past 2^31-1 ms; setLongTimeout chains links so a 30-day bound fires after 30 days, not before.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, setLongTimeout } from '../../src/runtime/long-timer.ts';
import { withTimeout } from '../../src/runtime/with-timeout.ts';

const DAY = 86_400_000;

afterEach(() => {
  vi.useRealTimers();
});

describe('setLongTimeout', () => {
  it('fires a 30-day timer after 30 days, not at the first link', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    setLongTimeout(fn, 30 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_MS + 1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_MS - 2);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
  });
  it('cancels whichever link is armed', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const cancel = setLongTimeout(fn, 60 * DAY);
    vi.advanceTimersByTime(40 * DAY);
    cancel();
    vi.advanceTimersByTime(40 * DAY);
    expect(fn).not.toHaveBeenCalled();
  });
  it('short delays are one plain timer', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    setLongTimeout(fn, 50);
    vi.advanceTimersByTime(49);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe('withTimeout', () => {
  it('a 30-day bound lets a short body finish, with no TimeoutOverflowWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const got = await withTimeout(() => new Promise((r) => setTimeout(() => r('done'), 20)), 30 * DAY, 's', 1);
      await new Promise((r) => setTimeout(r, 10));
      expect(got).toBe('done');
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
  it('still fails an attempt that outlives its bound', async () => {
    await expect(withTimeout(() => new Promise(() => {}), 20, 's', 2)).rejects.toThrow("step 's' attempt 2 timed out after 20ms");
  });
});
