// The fan-in hold of child ends (src/adapters/sqlite/fan-in.ts): a parent whose replay is slow
// and that has children still running is woken once for the ends that arrive within the hold;
// a fast parent, or one with no child left, is woken at once.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FanInHold, HOLD_FACTOR, HOLD_MAX_MS, HOLD_MIN_EXECUTION_MS } from '../../src/adapters/sqlite/fan-in.ts';

describe('FanInHold', () => {
  let woken: string[];
  let open: Set<string>;
  let hold: FanInHold;
  beforeEach(() => {
    vi.useFakeTimers();
    woken = [];
    open = new Set(['p']);
    hold = new FanInHold((id) => woken.push(id), (id) => open.has(id));
  });
  afterEach(() => vi.useRealTimers());

  it('wakes a parent with a fast replay at once', () => {
    hold.executed('p', HOLD_MIN_EXECUTION_MS - 1);
    expect(hold.hold('p')).toBe(false);
    expect(hold.pending).toBe(0);
  });

  it('holds a slow parent with children running: the ends within the hold share one wake', () => {
    hold.executed('p', 100);
    expect(hold.hold('p')).toBe(true);
    expect(hold.hold('p')).toBe(true);
    expect(hold.hold('p')).toBe(true);
    expect(hold.pending).toBe(1);
    vi.advanceTimersByTime(HOLD_FACTOR * 100 - 1);
    expect(woken).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(woken).toEqual(['p']);
    expect(hold.pending).toBe(0);
  });

  it('caps the hold, and does not hold when no child is left to end', () => {
    hold.executed('p', 10 * HOLD_MAX_MS);
    expect(hold.hold('p')).toBe(true);
    vi.advanceTimersByTime(HOLD_MAX_MS);
    expect(woken).toEqual(['p']);
    open.clear();
    expect(hold.hold('p')).toBe(false);
  });

  it('forgets a run that ended: its held wake is dropped', () => {
    hold.executed('p', 100);
    hold.hold('p');
    hold.forget('p');
    vi.advanceTimersByTime(HOLD_MAX_MS);
    expect(woken).toEqual([]);
    expect(hold.hold('p')).toBe(false);
  });
});
