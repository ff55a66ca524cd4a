// isoTime (src/domain/iso-time.ts) must give exactly Date#toISOString's text: run and step
// views, retention reports and lease views are formatted with it instead (idle RSS, issue 17).
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/domain/iso-time.ts';

const MAX = 8.64e15;

describe('isoTime', () => {
  it('matches toISOString on edge instants and extended years', () => {
    const edges = [
      0, 1, -1, 999, 1000, 59_999, 86_399_999, Date.UTC(2026, 11, 1, 5, 44, 20, 7), Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 12), Date.UTC(2100, 1, 28, 23, 59, 59, 990), Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1), Date.UTC(275760, 8, 13), Date.UTC(-1, 0, 1), Date.UTC(0, 0, 1) - 1, -62198755200000,
      MAX, -MAX, 1.5, -0.5, 1e12 + 0.9,
    ];
    for (const ms of edges) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('matches toISOString on random instants across the whole Date range', () => {
    let seed = 17;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor((next() * 2 - 1) * (i % 2 ? MAX : 4e12));
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('throws a RangeError where toISOString does', () => {
    for (const ms of [NaN, MAX + 1, -MAX - 1, Infinity, -Infinity]) {
      expect(() => new Date(ms).toISOString()).toThrow(RangeError);
      expect(() => isoTime(ms)).toThrow(RangeError);
    }
  });
});

describe('isoTime, instants in a row (the cached second)', () => {
  it('matches toISOString walking through second, minute, day and year boundaries', () => {
    const starts = [Date.UTC(2026, 11, 31, 23, 59, 58, 990), -2_500, Date.UTC(9999, 11, 31, 23, 59, 59, 0), -62198755200000 - 1500, 8.64e15 - 3_000];
    for (const start of starts) {
      for (let ms = start; ms < start + 3_000; ms += 7) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('still throws past the end of the Date range right after its last second', () => {
    expect(isoTime(8.64e15)).toBe(new Date(8.64e15).toISOString());
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 999)).toThrow(RangeError);
  });

  it('gives fractions Date truncation inside a cached second', () => {
    const base = Date.UTC(2026, 0, 2, 3, 4, 5, 0);
    for (const ms of [base, base + 1.5, base + 998.999, base + 0.25, -0.5, -999.5, -1000.5]) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});
