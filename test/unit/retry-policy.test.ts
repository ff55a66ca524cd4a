import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../src/domain/errors.ts';
import { backoffDelay, decideRetry, type RetryPolicy } from '../../src/domain/retry-policy.ts';
import { MAX_DURATION_MS } from '../../src/domain/duration.ts';
import { normalizeStepOptions } from '../../sdk/step-options.ts';

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

describe('retries.delay as a function; maxAttempts (issue 37)', () => {
  it('the function gets the attempt that failed and its error, and its duration is the wait (maxDelay caps it)', () => {
    const seen: [number, string][] = [];
    const { retry } = normalizeStepOptions('s', {
      retries: { limit: 4, maxDelay: '1m', delay: (attempt, error) => (seen.push([attempt, error.message]), attempt === 3 ? '2h' : `${attempt * 10}s`) },
    });
    const err = new Error('503');
    expect([1, 2, 3].map((a) => decideRetry(retry, a, err, () => 0.5))).toEqual([
      { retry: true, delayMs: 10_000 }, { retry: true, delayMs: 20_000 }, { retry: true, delayMs: 60_000 },
    ]);
    expect(seen).toEqual([[1, '503'], [2, '503'], [3, '503']]);
    expect(decideRetry(retry, 4, err, () => 0.5)).toEqual({ retry: false, reason: 'exhausted' });
  });

  it('a function that throws or returns no duration is a one-line error naming the step', () => {
    const bad = normalizeStepOptions('charge', { retries: { delay: () => 'soon' } }).retry;
    expect(() => decideRetry(bad, 1, new Error('x'), Math.random)).toThrow(/^step 'charge' options\.retries\.delay: the function returned soon: /);
    const throws = normalizeStepOptions('charge', { retries: { delay: () => { throw new Error('oops'); } } }).retry;
    expect(() => decideRetry(throws, 1, new Error('x'), Math.random)).toThrow("step 'charge' options.retries.delay: the function threw: oops");
  });

  it('maxAttempts is limit under a name that cannot be misread; both given must agree', () => {
    expect(normalizeStepOptions('s', { retries: { maxAttempts: 6 } }).retry.limit).toBe(6);
    expect(normalizeStepOptions('s', { retries: { maxAttempts: 6, limit: 6 } }).retry.limit).toBe(6);
    expect(() => normalizeStepOptions('s', { retries: { maxAttempts: 6, limit: 5 } })).toThrow(
      "step 's' options.retries: limit (5) and maxAttempts (6) are the same setting (total attempts) and disagree; give one",
    );
  });
});
