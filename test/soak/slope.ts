// The soak's growth check: a least-squares line through the second half of a metric's
// samples (the first half is warm-up: caches, JIT, SQLite page cache and the retention
// window filling), its slope extrapolated to an hour and compared with the metric's bound.
// The verdict takes the slope's standard error into account (fail when slope - k·SE is over
// the bound) so sampling noise on a short series cannot fail it, while on an hour of samples
// (SE tiny) it is the plain slope against the bound.

export interface Fit {
  /** Units per second. */
  slope: number;
  intercept: number;
  /** Standard error of the slope (units per second); Infinity with fewer than 3 points. */
  se: number;
  n: number;
}

/** Ordinary least squares of ys over xs (xs in seconds). */
export function leastSquares(xs: readonly number[], ys: readonly number[]): Fit {
  const n = xs.length;
  if (n !== ys.length) throw new Error(`leastSquares: ${n} xs but ${ys.length} ys`);
  if (n < 2) return { slope: 0, intercept: ys[0] ?? 0, se: Infinity, n };
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i]! - mx) ** 2;
    sxy += (xs[i]! - mx) * (ys[i]! - my);
  }
  if (sxx === 0) return { slope: 0, intercept: my, se: Infinity, n };
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let ssr = 0;
  for (let i = 0; i < n; i++) ssr += (ys[i]! - (intercept + slope * xs[i]!)) ** 2;
  const se = n > 2 ? Math.sqrt(ssr / (n - 2) / sxx) : Infinity;
  return { slope, intercept, se, n };
}

export interface GrowthBound {
  metric: string;
  unit: string;
  /** Most growth per hour the metric may show after warm-up. */
  perHour: number;
  why: string;
}

export interface GrowthVerdict {
  metric: string;
  unit: string;
  first: number;
  last: number;
  /** Fitted over the second half of the samples, per hour. */
  slopePerHour: number;
  sePerHour: number;
  bound: number;
  pass: boolean;
}

/** Standard errors the slope may sit over the bound before the check fails: ~2.3% one-sided. */
export const SE_MARGIN = 2;

/** The growth verdict for one metric; `series` is (seconds since start, value), in time order. */
export function checkGrowth(series: readonly { t: number; v: number }[], bound: GrowthBound, margin = SE_MARGIN): GrowthVerdict {
  const half = series.slice(Math.floor(series.length / 2));
  const fit = leastSquares(half.map((p) => p.t), half.map((p) => p.v));
  const slopePerHour = fit.slope * 3600;
  const sePerHour = fit.se * 3600;
  // Fewer than 3 points in the half: no slope worth judging, so no verdict against it.
  const low = Number.isFinite(sePerHour) ? slopePerHour - margin * sePerHour : -Infinity;
  return {
    metric: bound.metric,
    unit: bound.unit,
    first: series[0]?.v ?? NaN,
    last: series.at(-1)?.v ?? NaN,
    slopePerHour,
    sePerHour,
    bound: bound.perHour,
    pass: !(low > bound.perHour),
  };
}
