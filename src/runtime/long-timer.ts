// A real-time timer for any delay the API accepts. Node's setTimeout takes at most 2^31-1 ms
// (24.8 days): a longer delay fires at once with a TimeoutOverflowWarning. Every setTimeout
// whose delay comes from a user's duration (step timeouts, result() deadlines) goes through
// here. Durable timers (sleeps, waits, retry backoff) are not this: they go through the
// Clock port (SQLite) or Restate's own timers.

/** The longest delay one setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** setTimeout for any delay, chained in links of at most MAX_TIMER_MS. Returns a cancel. */
export function setLongTimeout(fn: () => void, delayMs: number): () => void {
  let handle: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    // A link never fires early, so counting down by links never ends before the delay.
    const link = Math.min(Math.max(0, left), MAX_TIMER_MS);
    handle = setTimeout(() => (left > link ? arm(left - link) : fn()), link);
  };
  arm(delayMs);
  return () => clearTimeout(handle);
}
