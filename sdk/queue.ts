// queue(name, limits): a named queue defined once and referenced by steps
// (`step.do(name, { queue: llm, key: userId }, body)`): at most `concurrency` bodies of it at
// once, at most `rateLimit.limit` starts in any window of `rateLimit.period`, and with `key`,
// the same limits again per key (per user, per tenant) with fair service across keys.
// Validated when defined, so a limit of 0 or a negative period fails at import with one line.
import * as z from 'zod';
import { readDuration } from '../src/domain/duration.ts';
import { ValidationError } from '../src/domain/errors.ts';
import type { QueueLimits } from '../src/domain/rate-limit.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import type { Duration } from './types.ts';

export const QUEUE_BRAND = 'tranquil.queue' as const;

/** A rate limit: at most `limit` starts in any window of `period` (sliding, never bursty at
 *  the window's edge). */
export interface RateLimitOptions {
  /** Starts allowed in any window of `period` (a sliding window: never more, at any edge). */
  limit: number;
  period: Duration;
}

/** One level of a queue's limits (the whole queue, or each key). */
export interface LimitOptions {
  /** Bodies running at once. */
  concurrency?: number;
  rateLimit?: RateLimitOptions;
}

/** queue()'s options: `concurrency` and `rateLimit` for the whole queue, `key` for each key. */
export interface QueueOptions extends LimitOptions {
  /** Limits that apply to each key separately (the step's `key`: a user, a tenant). */
  key?: LimitOptions;
}

/** A queue made by queue(name, options): steps name it in `{ queue }`, workflows in
 *  `{ queues }` and `{ runs: { queue } }`. */
export interface QueueDefinition {
  readonly kind: typeof QUEUE_BRAND;
  readonly name: string;
  readonly options: Readonly<QueueOptions>;
  /** The options in milliseconds, as the engine applies them. */
  readonly limits: Readonly<QueueLimits>;
}

/** A queue's name: a letter, then letters, digits, `_`, `.` or `-` (at most 120). */
export const QUEUE_NAME = /^[A-Za-z][A-Za-z0-9_.\-]{0,119}$/;

export const queueNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(120)
  .regex(/^[A-Za-z][A-Za-z0-9_.\-]*$/, 'must start with a letter and use letters, digits, _ . or -');

/** A duration longer than 0 ('1m', or ms), read as queue() reads it; the message names what is wrong. */
export const positiveDuration = z.custom<number | string>((v) => {
  const ms = readDuration(v);
  return typeof ms === 'number' && ms > 0;
}, {
  error: (issue) => {
    const ms = readDuration(issue.input);
    return typeof ms === 'string' ? ms : 'must be longer than 0';
  },
});

/** A count limit: an integer from 1 to 1,000,000. */
export const positiveLimit = z.number().int().min(1).max(1_000_000);

const limitsSchema = z
  .object({
    concurrency: positiveLimit.optional(),
    rateLimit: z
      .object({ limit: positiveLimit, period: positiveDuration })
      .strict()
      .optional(),
  })
  .strict();

const queueSchema = limitsSchema.extend({ key: limitsSchema.optional() }).strict();

/**
 * Defines a named queue (docs/flow-control.md): how many step bodies (or runs) may hold one
 * of its slots at once, how often they may start, and the same limits again per key.
 *
 * @throws ValidationError on a bad name or limit (0, a negative period, no limit at all).
 * @example
 * ```ts
 * import { queue } from '@tranquil/sdk';
 * const llm = queue('llm', { concurrency: 5, rateLimit: { limit: 60, period: '1m' }, key: { concurrency: 1 } });
 * ```
 */
export function queue(name: string, options: QueueOptions): QueueDefinition {
  parseOrThrow(queueNameSchema, typeof name === 'string' ? name : undefined, 'queue name', { path: 'omit' });
  const o = parseOrThrow(queueSchema, options, `queue '${name}' options`);
  if (o.concurrency === undefined && o.rateLimit === undefined && o.key === undefined) {
    throw new ValidationError(`queue '${name}' options: give concurrency, rateLimit or key (a queue without limits limits nothing)`);
  }
  if (o.key && o.key.concurrency === undefined && o.key.rateLimit === undefined) {
    throw new ValidationError(`queue '${name}' options.key: give concurrency or rateLimit per key`);
  }
  return Object.freeze({ kind: QUEUE_BRAND, name, options: Object.freeze(o as QueueOptions), limits: Object.freeze(toLimits(o)) });
}

function toLimits(o: z.infer<typeof queueSchema>): QueueLimits {
  const level = (l: z.infer<typeof limitsSchema>) => ({
    ...(l.concurrency !== undefined ? { concurrency: l.concurrency } : {}),
    ...(l.rateLimit ? { rate: { limit: l.rateLimit.limit, periodMs: readDuration(l.rateLimit.period) as number } } : {}),
  });
  return { ...level(o), ...(o.key ? { key: level(o.key) } : {}) };
}

/** Whether `v` is a queue made by queue(); never throws. */
export function isQueueDefinition(v: unknown): v is QueueDefinition {
  try {
    return typeof v === 'object' && v !== null && (v as QueueDefinition).kind === QUEUE_BRAND;
  } catch {
    return false;
  }
}

/** A step's `queue` option: a definition, or the name of one the workflow declares. */
export type QueueRef = QueueDefinition | string;

/** A workflow's `runs` option (run-level flow control): each run holds a slot of `queue` from
 *  its start to its end (sleeping and waiting included: "one run per user at a time"); a run
 *  over the limit stays pending, queued, until a slot frees up. `key` gives the run's key from
 *  its input (per user, per tenant); without it every run uses the queue's one default key. */
export interface RunQueueOptions<I = any> {
  queue: QueueDefinition;
  key?: (input: I) => string;
  /** The run's priority from its input: an integer, higher first among the runs waiting in
   *  the queue (any key); equal priorities keep their order and the keys' turns. Absent: 0. */
  priority?: (input: I) => number;
}

/** The bounds of a run's priority (DBOS's and Inngest's are bounded too). */
export const PRIORITY_MAX = 1_000_000;

export const runQueueSchema = z
  .object({
    queue: z.custom<QueueDefinition>((v) => isQueueDefinition(v), { error: "expected a queue('name', {...})" }),
    key: z.custom<(input: unknown) => string>((v) => typeof v === 'function', { error: 'expected a function of the input returning a string' }).optional(),
    priority: z.custom<(input: unknown) => number>((v) => typeof v === 'function', { error: 'expected a function of the input returning an integer' }).optional(),
  })
  .strict();

/** The key of a run of `workflow` with `input`: a key function that throws or returns no
 *  string (or an empty or too long one) is refused in one line naming it. */
export function runKeyOf(workflow: string, runs: Pick<RunQueueOptions, 'key'>, input: unknown): string {
  return keyFromInput(`workflow '${workflow}' runs.key`, runs.key, input);
}

/** The key a key function gives for `input` ('' without one); one that throws or returns no
 *  string (or an empty or too long one) is refused in one line naming `what`. */
export function keyFromInput(what: string, fn: ((input: any) => unknown) | undefined, input: unknown): string {
  if (!fn) return '';
  let key: unknown;
  try {
    key = fn(input);
  } catch (err) {
    throw new ValidationError(`${what}: the key function threw: ${(err as Error)?.message ?? String(err)}`);
  }
  if (typeof key !== 'string') throw new ValidationError(`${what}: the key function returned ${key === null ? 'null' : typeof key}, not a string`);
  if (key.length === 0 || key.length > 200) throw new ValidationError(`${what}: the key function returned a string of ${key.length} characters (1 to 200)`);
  return key;
}

/** The priority of a run of `workflow` with `input` (0 without a priority function): one that
 *  throws or returns anything but an integer within ±PRIORITY_MAX is refused in one line. */
export function runPriorityOf(workflow: string, runs: Pick<RunQueueOptions, 'priority'>, input: unknown): number {
  if (!runs.priority) return 0;
  let p: unknown;
  try {
    p = runs.priority(input);
  } catch (err) {
    throw new ValidationError(`workflow '${workflow}' runs.priority: the priority function threw: ${(err as Error)?.message ?? String(err)}`);
  }
  if (typeof p !== 'number') throw new ValidationError(`workflow '${workflow}' runs.priority: the priority function returned ${p === null ? 'null' : typeof p}, not an integer`);
  if (!Number.isInteger(p) || Math.abs(p) > PRIORITY_MAX) throw new ValidationError(`workflow '${workflow}' runs.priority: the priority function returned ${p}, not an integer from -${PRIORITY_MAX} to ${PRIORITY_MAX}`);
  return p;
}
