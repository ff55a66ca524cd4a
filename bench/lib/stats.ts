// Small statistics helpers (median of repetitions, min-max, percentiles).
export interface Summary { n: number; median: number; min: number; max: number; mean: number }

export function summarize(xs: readonly number[]): Summary {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, median: NaN, min: NaN, max: NaN, mean: NaN };
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n: s.length, median, min: s[0]!, max: s[s.length - 1]!, mean: s.reduce((a, b) => a + b, 0) / s.length };
}

/** Nearest-rank percentile of an unsorted sample (p in 0..100). */
export function percentile(xs: ArrayLike<number>, p: number): number {
  const s = Float64Array.from(xs as ArrayLike<number>).sort();
  if (s.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

export const nowMs = (): number => performance.now();
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
