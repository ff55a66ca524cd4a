// Durations: a number is milliseconds; a string is one or more <int><unit> parts,
// e.g. '30s', '15m', '48h', '7d', '1h30m', '250ms'. Pure parsing, no clock.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;

export type Duration = number | string;

export function parseDuration(value: Duration, field = 'duration'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`${field}: ${value} is not a finite number of ms`);
    return value;
  }
  if (typeof value !== 'string' || value.length === 0) {
    throw new RangeError(`${field}: expected ms or a string like '30s', '15m', '48h', '7d'`);
  }
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = PART.exec(value); m; m = PART.exec(value)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed = PART.lastIndex;
  }
  if (consumed !== value.length) {
    throw new RangeError(`${field}: '${value}' is not a duration (use e.g. '30s', '15m', '48h', '7d')`);
  }
  return total;
}

export function isDuration(value: unknown): boolean {
  try {
    parseDuration(value as Duration);
    return true;
  } catch {
    return false;
  }
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
