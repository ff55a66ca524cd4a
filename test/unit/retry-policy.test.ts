import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../src/domain/errors.ts';
import { backoffDelay, decideRetry, type RetryPolicy } from '../../src/domain/retry-policy.ts';
import { MAX_DURATION_MS } from '../../src/domain/duration.ts';

const p = (o: Partial<RetryPolicy>): RetryPolicy => ({ limit: 5, backoff: 'exponential', delayMs: 1000, jitter: false, ...o });
const half = () => 0.5;

describe('backoffDelay', () => {
  it.each([
    ['constant', 1, 1000], ['constant', 4, 1000],
    ['linear', 1, 1000], ['linear', 3, 3000],
    ['exponential', 1, 1000], ['exponential', 2, 2000], ['exponential', 4, 8000],
  ] as const)('%s after attempt %i waits %i ms', (backoff, attempt, ms) => {
    expect(backoffDelay(p({ backoff }), attempt, half)).toBe(ms);
  });
  it('caps at maxDelay', () => {
    expect(backoffDelay(p({ maxDelayMs: 3000 }), 10, half)).toBe(3000);
  });
  it('never passes the longest accepted duration, even after thousands of doublings', () => {
    expect(backoffDelay(p({}), 60, half)).toBe(MAX_DURATION_MS);
    expect(backoffDelay(p({}), 5000, half)).toBe(MAX_DURATION_MS); // 2 ** 4999 is Infinity
  });
  it('jitter keeps between half and all of the delay, from the injected source', () => {
    expect(backoffDelay(p({ jitter: true }), 3, () => 0)).toBe(2000);
    expect(backoffDelay(p({ jitter: true }), 3, () => 0.999999)).toBe(4000);
    expect(backoffDelay(p({ jitter: true }), 3, half)).toBe(3000);
  });
});

describe('decideRetry', () => {
  it('never retries a TerminalError', () => {
    expect(decideRetry(p({}), 1, new TerminalError('no'), half)).toEqual({ retry: false, reason: 'terminal' });
  });
  it('stops when attempts reach the limit (limit = total attempts)', () => {
    expect(decideRetry(p({ limit: 3 }), 2, new Error('x'), half)).toEqual({ retry: true, delayMs: 2000 });
    expect(decideRetry(p({ limit: 3 }), 3, new Error('x'), half)).toEqual({ retry: false, reason: 'exhausted' });
  });
  it('retries non-Error throws', () => {
    expect(decideRetry(p({}), 1, 'plain', half)).toMatchObject({ retry: true });
  });
});
