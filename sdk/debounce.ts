// A workflow's `debounce` option (docs/flow-control.md, Debounce; Inngest's `debounce { period,
// key, timeout }`): a burst of triggers with one key becomes one run with the last input,
// started `period` after the last trigger and at most `maxWait` after the first.
// Validated when the workflow is defined; the key is read at trigger time.
import * as z from 'zod';
import { readDuration } from '../src/domain/duration.ts';
import { ValidationError } from '../src/domain/errors.ts';
import { keyFromInput, positiveDuration } from './queue.ts';
import type { Duration } from './types.ts';

/** workflow(name, { debounce }, ...): collapse a burst of triggers into one run. */
export interface DebounceOptions<I = any> {
  /** Quiet time after the last trigger before the run starts ('5s', or ms; longer than 0). */
  period: Duration;
  /** The burst's key from the input (per user, per tenant): keys debounce separately.
   *  Absent: one burst for the whole workflow. */
  key?: (input: I) => string;
  /** The longest a burst may delay its run, counted from its first trigger (at least
   *  `period`). Absent: no bound (a steady stream of triggers keeps postponing the run). */
  maxWait?: Duration;
}

/** The options in milliseconds, as the engine applies them. */
export interface DebounceSpec<I = any> {
  readonly periodMs: number;
  readonly maxWaitMs?: number;
  readonly key?: (input: I) => string;
}

export const debounceSchema = z
  .object({
    period: positiveDuration,
    key: z.custom<(input: unknown) => string>((v) => typeof v === 'function', { error: 'expected a function of the input returning a string' }).optional(),
    maxWait: positiveDuration.optional(),
  })
  .strict();

/** The validated options (the schema has run) in ms; maxWait shorter than period is refused. */
export function debounceSpec(workflow: string, o: z.infer<typeof debounceSchema>): DebounceSpec {
  const periodMs = readDuration(o.period) as number;
  const maxWaitMs = o.maxWait === undefined ? undefined : (readDuration(o.maxWait) as number);
  if (maxWaitMs !== undefined && maxWaitMs < periodMs) {
    throw new ValidationError(`workflow '${workflow}' options.debounce.maxWait: must be at least the period (${periodMs}ms), got ${maxWaitMs}ms`);
  }
  return Object.freeze({ periodMs, ...(maxWaitMs !== undefined ? { maxWaitMs } : {}), ...(o.key ? { key: o.key } : {}) });
}

/** The burst key of a trigger of `workflow` with `input` ('' without a key function); a key
 *  function that throws or returns no string is refused in one line naming it. */
export function debounceKeyOf(workflow: string, spec: DebounceSpec, input: unknown): string {
  return spec.key ? keyFromInput(`workflow '${workflow}' debounce.key`, spec.key, input) : '';
}

/** When a burst that began at `firstAt` runs, for a trigger at `now`. */
export function debounceDueAt(spec: { periodMs: number; maxWaitMs?: number }, firstAt: number, now: number): number {
  const quiet = now + spec.periodMs;
  return spec.maxWaitMs === undefined ? quiet : Math.min(quiet, firstAt + spec.maxWaitMs);
}
