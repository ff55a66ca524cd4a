// Constant-time secret comparison: both sides are hashed to equal-length digests first,
// so neither the content nor the length of the expected secret leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
