// A clock that moves only when told. Timers fire in due order as advance() passes them,
// so nothing fires before its time even across a long jump.
import type { Clock } from '../../ports/clock.ts';

interface Timer {
  at: number;
  fn: () => void;
  id: number;
}

/** The test engine's clock (TestEngine.clock): moves only when told, firing due timers in
 *  order. */
export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start: number) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(at: number, fn: () => void): () => void {
    const timer = { at, fn, id: this.seq++ };
    this.timers.push(timer);
    if (at <= this.current) queueMicrotask(() => this.fire(timer));
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Earliest pending timer time, if any. */
  nextTimerAt(): number | undefined {
    let min: number | undefined;
    for (const t of this.timers) if (min === undefined || t.at < min) min = t.at;
    return min;
  }

  /** Moves to `to` (never backwards unless `allowBackward`) and fires timers that became due. */
  set(to: number, allowBackward = false): void {
    if (to < this.current && !allowBackward) throw new RangeError('manual clock cannot move backwards');
    this.current = to;
    for (const t of [...this.timers].sort((a, b) => a.at - b.at || a.id - b.id)) {
      if (t.at <= this.current) this.fire(t);
    }
  }

  private fire(t: Timer): void {
    if (!this.timers.includes(t)) return;
    this.timers = this.timers.filter((x) => x !== t);
    t.fn();
  }
}
