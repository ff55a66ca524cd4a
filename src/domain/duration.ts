// Durations: a number is milliseconds; a string is one or more <int><unit> parts,
// e.g. '30s', '15m', '48h', '7d', '1h30m', '250ms'. Pure parsing, no clock.
// Every duration parsed here works however long it is (timers longer than Node's 24.8-day
// setTimeout limit are chained): the one bound is MAX_DURATION_MS, so that every wake
// time stays a valid Date and a finite number on both backends.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;

/** A length of time: a number of milliseconds, or a string of `<number><unit>` parts with
 *  units ms, s, m, h, d, w, such as '250ms', '30s', '1h30m', '7d'. At most 100 years. */
export type Duration = number | string;

/** 100 years (36,525 days): the longest duration, either sign, the engine accepts. */
export const MAX_DURATION_MS = 36_525 * 86_400_000;

export function parseDuration(value: Duration, field = 'duration'): number {
  const r = readDuration(value);
  if (typeof r === 'string') throw new RangeError(`${field}: ${r}`);
  return r;
}

/** The duration in ms, or what is wrong with it (no field name: callers add their own). */
export function readDuration(value: unknown): number | string {
  let ms: number;
  let shown: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `${value} is not a finite number of ms`;
    ms = value;
    shown = `${value}ms`;
  } else if (typeof value !== 'string' || value.length === 0) {
    return "expected ms or a string like '30s', '15m', '48h', '7d'";
  } else {
    PART.lastIndex = 0;
    let total = 0;
    let consumed = 0;
    for (let m = PART.exec(value); m; m = PART.exec(value)) {
      total += Number(m[1]) * UNIT_MS[m[2]!]!;
      consumed = PART.lastIndex;
    }
    if (consumed !== value.length) return `'${value}' is not a duration (use e.g. '30s', '15m', '48h', '7d')`;
    ms = total;
    shown = `'${value}'`;
  }
  // NaN-safe: a string of 400 digits parses to Infinity.
  if (!(Math.abs(ms) <= MAX_DURATION_MS)) return `${shown} is longer than 100 years (36525d), the longest duration accepted`;
  return ms;
}

export function isDuration(value: unknown): boolean {
  return typeof readDuration(value) === 'number';
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join(' ');
}
