// The in-process Scheduler on a manual clock: one timer at the earliest due time, re-armed
// earlier on demand, a bounded catch-up that claims again only once the backlog drained,
// a re-scan on clock jumps, and nothing after stop().
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/adapters/clock/manual-clock.ts';
import type { TimerClaim, TimerSource } from '../../src/ports/scheduler.ts';
import { TimerScheduler } from '../../src/runtime/timer-scheduler.ts';

/** A manual clock that can also report a wall-clock jump. */
class JumpingClock extends ManualClock {
  private readonly listeners = new Set<(gap: number) => void>();
  onJump(fn: (gap: number) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  /** Time moves without any timer firing (timers stalled during a suspend), then reports it. */
  jump(ms: number): void {
    (this as unknown as { current: number }).current += ms;
    for (const l of this.listeners) l(ms);
  }
}

/** A source of due times: claims (at most `batch` of) those at or before now. */
class DueTimes implements TimerSource {
  claims: number[] = [];
  claimed: number[] = [];
  pendingWork = 0;
  constructor(private due: number[]) {}
  add(at: number): void {
    this.due.push(at);
  }
  claimDue(now: number, batch: number): TimerClaim {
    this.claims.push(now);
    this.due.sort((a, b) => a - b);
    const ready = this.due.filter((t) => t <= now).slice(0, batch);
    this.due = this.due.slice(ready.length);
    this.claimed.push(...ready);
    this.pendingWork += ready.length;
    return ready.length === batch ? { more: true } : { more: false, nextAt: this.due[0] };
  }
  backlog(): number {
    return this.pendingWork;
  }
}

const T0 = Date.parse('2026-01-01T00:00:00Z');
const turn = () => new Promise((r) => setImmediate(r));

describe('TimerScheduler', () => {
  it('arms one timer at the earliest due time of all sources', async () => {
    const clock = new ManualClock(T0);
    const s = new TimerScheduler({ clock });
    const a = new DueTimes([T0 + 5000, T0 + 9000]);
    const b = new DueTimes([T0 + 3000]);
    s.register(a);
    s.register(b);
    await s.start();
    expect(clock.nextTimerAt()).toBe(T0 + 3000);
    clock.set(T0 + 3000);
    expect(b.claimed).toEqual([T0 + 3000]);
    expect(a.claimed).toEqual([]);
    // One timer, re-armed at the next earliest: a's first.
    expect(clock.nextTimerAt()).toBe(T0 + 5000);
    clock.set(T0 + 9000);
    expect(a.claimed).toEqual([T0 + 5000, T0 + 9000]);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('armAt re-arms earlier, never later', async () => {
    const clock = new ManualClock(T0);
    const s = new TimerScheduler({ clock });
    const a = new DueTimes([T0 + 10_000]);
    s.register(a);
    await s.start();
    expect(clock.nextTimerAt()).toBe(T0 + 10_000);
    s.armAt(T0 + 20_000);
    expect(clock.nextTimerAt()).toBe(T0 + 10_000);
    a.add(T0 + 2000);
    s.armAt(T0 + 2000);
    expect(clock.nextTimerAt()).toBe(T0 + 2000);
    clock.set(T0 + 2000);
    expect(a.claimed).toEqual([T0 + 2000]);
    expect(clock.nextTimerAt()).toBe(T0 + 10_000);
  });

  it('a full batch claims again only once the backlog has drained to half a batch', async () => {
    const clock = new ManualClock(T0);
    const s = new TimerScheduler({ clock, batch: 4 });
    const a = new DueTimes(Array.from({ length: 10 }, (_, i) => T0 - 1000 + i));
    s.register(a);
    await s.start();
    expect(a.claimed).toHaveLength(4);
    expect(s.catchingUp).toBe(true);
    expect(clock.nextTimerAt()).toBeUndefined(); // no re-arm while catching up
    s.claimMoreIfDrained(); // backlog 4 > 2: not yet
    await turn();
    expect(a.claims).toHaveLength(1);
    a.pendingWork = 2;
    s.claimMoreIfDrained();
    expect(s.catchingUp).toBe(false);
    await turn();
    expect(a.claims).toHaveLength(2);
    expect(a.claimed).toHaveLength(8);
    expect(s.catchingUp).toBe(true);
    a.pendingWork = 0;
    s.claimMoreIfDrained();
    await turn();
    expect(a.claimed).toHaveLength(10);
    expect(s.catchingUp).toBe(false);
  });

  it('a clock jump re-scans at once; so does rescan()', async () => {
    const clock = new JumpingClock(T0);
    const s = new TimerScheduler({ clock });
    const a = new DueTimes([T0 + 3_600_000]);
    s.register(a);
    await s.start();
    expect(a.claims).toEqual([T0]);
    clock.jump(2 * 3_600_000);
    await turn();
    expect(a.claimed).toEqual([T0 + 3_600_000]);
    expect(a.claims).toEqual([T0, T0 + 2 * 3_600_000]);
    a.add(T0 + 2 * 3_600_000 + 1);
    (clock as unknown as { current: number }).current += 10; // silently, no timer fires
    await s.rescan();
    expect(a.claimed).toEqual([T0 + 3_600_000, T0 + 2 * 3_600_000 + 1]);
  });

  it('awaits an async source before re-arming at its next time', async () => {
    const clock = new ManualClock(T0);
    const s = new TimerScheduler({ clock });
    const inner = new DueTimes([T0 + 1000]);
    s.register({ claimDue: async (now, batch) => (await turn(), inner.claimDue(now, batch)) });
    await s.start();
    expect(clock.nextTimerAt()).toBe(T0 + 1000);
  });

  it('stop cancels the timer and ignores jumps and drains', async () => {
    const clock = new JumpingClock(T0);
    const s = new TimerScheduler({ clock });
    const a = new DueTimes([T0 + 1000]);
    s.register(a);
    await s.start();
    expect(clock.nextTimerAt()).toBe(T0 + 1000);
    s.stop();
    expect(clock.nextTimerAt()).toBeUndefined();
    s.armAt(T0 + 500);
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.jump(5000);
    await s.rescan();
    clock.set(T0 + 10_000);
    await turn();
    expect(a.claims).toEqual([T0]);
    expect(a.claimed).toEqual([]);
  });

  it('a failing claim is retried, not fatal', async () => {
    const clock = new ManualClock(T0);
    const s = new TimerScheduler({ clock });
    let fail = true;
    const a = new DueTimes([T0]);
    s.register({ claimDue: (now, batch) => { if (fail) throw new Error('disk full'); return a.claimDue(now, batch); } });
    const errors: unknown[] = [];
    const orig = console.error;
    console.error = (m: unknown) => void errors.push(m);
    try {
      await s.start();
    } finally {
      console.error = orig;
    }
    expect(errors[0]).toMatch(/could not be claimed \(will retry\): disk full/);
    // What was due is not claimed until the retry ran: an engine waiting for idle counts it.
    expect(s.retrying).toBe(true);
    fail = false;
    await new Promise((r) => setTimeout(r, 1100));
    expect(a.claimed).toEqual([T0]);
    expect(s.retrying).toBe(false);
    s.stop();
  });

  it('a retry still pending is dropped by stop() and by a claim that went through', async () => {
    const clock = new ManualClock(T0);
    const s = new TimerScheduler({ clock });
    let fail = true;
    const a = new DueTimes([T0, T0 + 5000]);
    s.register({ claimDue: (now, batch) => { if (fail) throw new Error('disk full'); return a.claimDue(now, batch); } });
    const orig = console.error;
    console.error = () => {};
    try {
      await s.start();
      expect(s.retrying).toBe(true);
      fail = false;
      await s.rescan(); // e.g. a wall-clock jump: this claim covers what the failed one left
      expect(a.claimed).toEqual([T0]);
      expect(s.retrying).toBe(false);
      fail = true;
      clock.set(T0 + 5000);
      expect(s.retrying).toBe(true);
      s.stop();
      expect(s.retrying).toBe(false);
    } finally {
      console.error = orig;
    }
  });
});
