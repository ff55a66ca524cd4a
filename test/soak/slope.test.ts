// The soak's growth check on synthetic series: it finds the slope of a line exactly, passes a
// flat series with noise and a GC-like sawtooth, ignores growth confined to the warm-up half,
// and fails a series that leaks steadily (so the soak's check can fail).
import { describe, expect, it } from 'vitest';
import { checkGrowth, leastSquares, type GrowthBound } from './slope.ts';

const rss: GrowthBound = { metric: 'rssMiB', unit: 'MiB', perHour: 60, why: 'test' };
// A deterministic pseudo-random noise source (no flaky test from Math.random).
function noise(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * 2;
}
const series = (n: number, stepS: number, f: (t: number, i: number) => number) =>
  Array.from({ length: n }, (_, i) => ({ t: i * stepS, v: f(i * stepS, i) }));

describe('soak growth check', () => {
  it('fits an exact line and its zero standard error', () => {
    const fit = leastSquares([0, 10, 20, 30], [5, 6, 7, 8]);
    expect(fit.slope).toBeCloseTo(0.1, 12);
    expect(fit.intercept).toBeCloseTo(5, 12);
    expect(fit.se).toBeCloseTo(0, 12);
  });

  it('passes an hour of flat RSS with ±3 MiB noise and a GC sawtooth', () => {
    const r = noise(7);
    const s = series(360, 10, (_t, i) => 120 + 3 * r() + (i % 6) * 1.5);
    const v = checkGrowth(s, rss);
    expect(v.pass).toBe(true);
    expect(Math.abs(v.slopePerHour)).toBeLessThan(10);
  });

  it('ignores growth in the warm-up half and judges the second half only', () => {
    const r = noise(3);
    const s = series(36, 5, (t) => (t < 90 ? 80 + t / 2 : 125) + r());
    expect(checkGrowth(s, rss).pass).toBe(true);
  });

  it('fails an hour that leaks 2 MiB/min under the same noise', () => {
    const r = noise(11);
    const s = series(360, 10, (t) => 120 + (2 * t) / 60 + 3 * r());
    const v = checkGrowth(s, rss);
    expect(v.pass).toBe(false);
    expect(v.slopePerHour).toBeGreaterThan(110);
    expect(v.slopePerHour).toBeLessThan(130);
  });

  it('fails a 3-minute slice that leaks 5 MiB/min, and passes the same slice flat', () => {
    const r = noise(5);
    const leaking = series(36, 5, (t) => 100 + (5 * t) / 60 + r());
    expect(checkGrowth(leaking, rss).pass).toBe(false);
    const flat = series(36, 5, () => 100 + r());
    expect(checkGrowth(flat, rss).pass).toBe(true);
  });

  it('needs the slope over the bound by two standard errors: a clean 70 MiB/h line fails, the same line under ±2 MiB noise over 40 s does not', () => {
    const line = (t: number) => 100 + (70 / 3600) * t;
    const clean = checkGrowth(series(18, 5, (t) => line(t)), rss);
    expect(clean.slopePerHour).toBeCloseTo(70, 6);
    expect(clean.pass).toBe(false);
    const noisy = checkGrowth(series(18, 5, (t, i) => line(t) + (i % 2 ? 2 : -2)), rss);
    expect(noisy.slopePerHour).toBeGreaterThan(60);
    expect(noisy.pass).toBe(true);
  });
});
