// Retry policy: how many attempts, how long between them. Pure: the random source for
// jitter is injected, so a seeded source gives a reproducible schedule.
import { MAX_DURATION_MS } from './duration.ts';
import { TerminalError } from './errors.ts';

/** How the delay between attempts grows from `retries.delay`: the same every time,
 *  delay x attempt, or doubling each attempt (the default). */
export type Backoff = 'constant' | 'linear' | 'exponential';

export interface RetryPolicy {
  /** Total attempts, the first included. */
  limit: number;
  backoff: Backoff;
  delayMs: number;
  maxDelayMs?: number;
  jitter: boolean;
  /** `retries.delay` given as a function: the delay in ms after `attempt` (1: the first)
   *  failed with `error`; replaces backoff and jitter (maxDelay still caps it). */
  delayFn?: (attempt: number, error: unknown) => number;
}

export const DEFAULT_RETRY: RetryPolicy = { limit: 3, backoff: 'exponential', delayMs: 1000, jitter: true };

export type RetryDecision = { retry: false; reason: 'terminal' | 'exhausted' } | { retry: true; delayMs: number };

/** Delay before attempt `failedAttempt + 1`, ignoring the limit. */
export function backoffDelay(policy: RetryPolicy, failedAttempt: number, random: () => number, error?: unknown): number {
  const n = Math.max(1, failedAttempt);
  if (policy.delayFn) {
    const d = policy.delayFn(n, error);
    return Math.max(0, Math.round(Math.min(d, policy.maxDelayMs ?? MAX_DURATION_MS, MAX_DURATION_MS)));
  }
  let delay =
    policy.backoff === 'constant' ? policy.delayMs
    : policy.backoff === 'linear' ? policy.delayMs * n
    : policy.delayMs * 2 ** (n - 1);
  if (policy.maxDelayMs !== undefined) delay = Math.min(delay, policy.maxDelayMs);
  // Exponential growth over many attempts passes any wake time a Date can hold (and then
  // Infinity): no backoff is longer than the longest duration the API accepts.
  delay = Math.min(delay, MAX_DURATION_MS);
  // "Equal jitter": keeps at least half the delay so backoff still backs off.
  if (policy.jitter) delay = delay / 2 + random() * (delay / 2);
  return Math.max(0, Math.round(delay));
}

export function decideRetry(
  policy: RetryPolicy,
  failedAttempt: number,
  error: unknown,
  random: () => number,
): RetryDecision {
  if (error instanceof TerminalError) return { retry: false, reason: 'terminal' };
  if (failedAttempt >= policy.limit) return { retry: false, reason: 'exhausted' };
  return { retry: true, delayMs: backoffDelay(policy, failedAttempt, random, error) };
}
