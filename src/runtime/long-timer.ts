// A real-time timer for any delay the API or the engine config accepts. Node's setTimeout
// (and setInterval) takes at most 2^31-1 ms (24.8 days): a longer delay fires after 1 ms with
// a TimeoutOverflowWarning. Every timer whose delay comes from a user's duration (step
// timeouts, result() deadlines, the cancel grace, retention and deployment sweeps) goes
// through here. Durable timers (sleeps, waits, retry backoff) are not this: they go through
// the Clock port (SQLite) or Restate's own timers.

/** The longest delay one setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimerOptions {
  /** The timer does not keep the process alive (Node's unref; ignored where absent, Deno). */
  unref?: boolean;
}

/** setTimeout for any delay, chained in links of at most MAX_TIMER_MS. Returns a cancel. */
export function setLongTimeout(fn: () => void, delayMs: number, options: LongTimerOptions = {}): () => void {
  let handle: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    // A link never fires early, so counting down by links never ends before the delay.
    const link = Math.min(Math.max(0, left), MAX_TIMER_MS);
    handle = setTimeout(() => (left > link ? arm(left - link) : fn()), link);
    if (options.unref) (handle as { unref?: () => void }).unref?.();
  };
  arm(delayMs);
  return () => clearTimeout(handle);
}

/** setInterval for any period: `fn` every `periodMs`, each period a setLongTimeout. Returns a
 *  cancel. */
export function setLongInterval(fn: () => void, periodMs: number, options: LongTimerOptions = {}): () => void {
  let cancel: () => void;
  let stopped = false;
  const next = () => {
    cancel = setLongTimeout(() => {
      if (stopped) return;
      next();
      fn();
    }, periodMs, options);
  };
  next();
  return () => {
    stopped = true;
    cancel();
  };
}
