// Time as a port: wake times are computed only through it, and tests swap in a manual clock.
export interface Clock {
  now(): number;
  /** Calls fn once at (or after) epoch ms `at`. Returns a cancel function. */
  setTimer(at: number, fn: () => void): () => void;
  /** Optional: calls fn when wall time moved far from what elapsed timers measured (the
   *  machine slept, the clock was stepped). Returns an unsubscribe function. */
  onJump?(fn: (gapMs: number) => void): () => void;
}
