// Step options as the user writes them -> the normalised policy both backends execute.
import * as z from 'zod';
import { parseDuration, readDuration } from '../src/domain/duration.ts';
import { ValidationError } from '../src/domain/errors.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../src/domain/retry-policy.ts';
import type { StepOptions } from './types.ts';
import { isQueueDefinition, QUEUE_NAME, queueNameSchema, type QueueRef } from './queue.ts';

const queueRefSchema = z.union([
  queueNameSchema,
  z.custom((v) => isQueueDefinition(v), { error: "expected a queue('name', {...}) or a queue's name" }),
]);

// The message says what is wrong with this value (not a duration, too long, ...).
const duration = z.custom<number | string>((v) => typeof readDuration(v) === 'number', {
  error: (issue) => String(readDuration(issue.input)),
});

const optionsSchema = z
  .object({
    retries: z
      .object({
        limit: z.number().int().min(1).max(10_000).optional(),
        maxAttempts: z.number().int().min(1).max(10_000).optional(),
        backoff: z.enum(['constant', 'linear', 'exponential']).optional(),
        delay: z.union([z.custom<(attempt: number, error: Error) => number | string>((v) => typeof v === 'function'), duration]).optional(),
        maxDelay: duration.optional(),
        jitter: z.boolean().optional(),
      })
      .strict()
      .optional(),
    timeout: duration.optional(),
    /** Flow control (sdk/queue.ts): the body holds a slot of this queue while it runs. */
    queue: queueRefSchema.optional(),
    key: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(200).optional(),
  })
  .strict();

export interface NormalizedStepOptions {
  retry: RetryPolicy;
  timeoutMs?: number;
  queue?: QueueRef;
  /** The queue key (absent: the queue's one default key). */
  key?: string;
}

const byDefaults = new WeakMap<StepOptions, NormalizedStepOptions>();
const byOptions = new WeakMap<StepOptions, WeakMap<StepOptions, NormalizedStepOptions>>();
const NO_DEFAULTS: StepOptions = {};

/** normalizeStepOptions of `defaults` overlaid with `options` (retries merged field by field),
 *  cached by the identity of both objects: step.do without options, or with a hoisted options
 *  object, validates once instead of on every call. The result is frozen (shared). */
export function resolveStepOptions(stepName: string, defaults: StepOptions | undefined, options: StepOptions | undefined): NormalizedStepOptions {
  try {
    return resolveCached(stepName, defaults, options);
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw new ValidationError(`step '${stepName}' options: cannot be read (${(err as Error)?.message ?? 'it threw'})`); // spreading a proxy that throws
  }
}

function resolveCached(stepName: string, defaults: StepOptions | undefined, options: StepOptions | undefined): NormalizedStepOptions {
  const d = defaults ?? NO_DEFAULTS;
  if (options === undefined) return ofDefaults(stepName, d);
  if (typeof options !== 'object' || options === null) return normalizeStepOptions(stepName, options);
  const queued = queueOnly(stepName, d, options);
  if (queued) return queued;
  let perDefaults = byOptions.get(options);
  let hit = perDefaults?.get(d);
  if (hit) return hit;
  hit = freeze(normalizeStepOptions(stepName, { ...d, ...options, retries: { ...d.retries, ...options.retries } }));
  if (!perDefaults) byOptions.set(options, (perDefaults = new WeakMap()));
  perDefaults.set(d, hit);
  return hit;
}

function ofDefaults(stepName: string, d: StepOptions): NormalizedStepOptions {
  let hit = byDefaults.get(d);
  if (!hit) byDefaults.set(d, (hit = freeze(normalizeStepOptions(stepName, { ...d, retries: { ...d.retries } }))));
  return hit;
}

/** Options that only name a queue and a key (`{ queue: llm, key: input.userId }`: a new
 *  object per call, which the identity cache never hits) are read without the schema: the
 *  defaults' normalised options plus the two fields, checked as the schema checks them. Any
 *  other shape, or a value the schema would refuse, returns undefined: the schema's path
 *  takes it (and words the error). This is the flow-control step path (docs/flow-control.md). */
function queueOnly(stepName: string, d: StepOptions, options: StepOptions): NormalizedStepOptions | undefined {
  const keys = Object.keys(options);
  if (keys.length > 2) return undefined;
  for (const k of keys) if (k !== 'queue' && k !== 'key') return undefined;
  const { queue, key } = options;
  if (typeof queue === 'string' ? !QUEUE_NAME.test(queue) : !isQueueDefinition(queue)) return undefined;
  if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 200)) return undefined;
  const base = ofDefaults(stepName, d);
  return { retry: base.retry, timeoutMs: base.timeoutMs, queue, key: key ?? base.key };
}

function freeze(o: NormalizedStepOptions): NormalizedStepOptions {
  Object.freeze(o.retry);
  return Object.freeze(o);
}

/** A user's delay function as ms: what it returns is a duration like `delay` takes; one that
 *  throws or returns no duration is a one-line ValidationError naming the step. */
function delayFunction(stepName: string, fn: (attempt: number, error: Error) => number | string): (attempt: number, error: unknown) => number {
  return (attempt, error) => {
    let d: unknown;
    try {
      d = fn(attempt, error as Error);
    } catch (err) {
      throw new ValidationError(`step '${stepName}' options.retries.delay: the function threw: ${(err as Error)?.message ?? String(err)}`);
    }
    const ms = readDuration(d);
    if (typeof ms !== 'number') throw new ValidationError(`step '${stepName}' options.retries.delay: the function returned ${String(d)}: ${ms}`);
    return ms;
  };
}

export function normalizeStepOptions(stepName: string, options: StepOptions | undefined): NormalizedStepOptions {
  const parsed = parseOrThrow(optionsSchema, options ?? {}, `step '${stepName}' options`);
  const o = parsed.retries ?? {};
  // Two names, one meaning (total attempts, the first included: docs/values.md, Retry):
  // both given must agree.
  if (o.limit !== undefined && o.maxAttempts !== undefined && o.limit !== o.maxAttempts) {
    throw new ValidationError(`step '${stepName}' options.retries: limit (${o.limit}) and maxAttempts (${o.maxAttempts}) are the same setting (total attempts) and disagree; give one`);
  }
  const delay = o.delay;
  const retry: RetryPolicy = {
    limit: o.maxAttempts ?? o.limit ?? DEFAULT_RETRY.limit,
    backoff: o.backoff ?? DEFAULT_RETRY.backoff,
    delayMs: delay !== undefined && typeof delay !== 'function' ? parseDuration(delay) : DEFAULT_RETRY.delayMs,
    maxDelayMs: o.maxDelay !== undefined ? parseDuration(o.maxDelay) : undefined,
    jitter: o.jitter ?? DEFAULT_RETRY.jitter,
  };
  if (typeof delay === 'function') retry.delayFn = delayFunction(stepName, delay);
  const timeoutMs = parsed.timeout !== undefined ? parseDuration(parsed.timeout) : undefined;
  if (timeoutMs !== undefined && timeoutMs <= 0) throw new ValidationError(`step '${stepName}' options.timeout: must be > 0`);
  if (parsed.key !== undefined && parsed.queue === undefined) throw new ValidationError(`step '${stepName}' options.key: needs a queue (options.queue)`);
  if (parsed.queue === undefined) return { retry, timeoutMs };
  return { retry, timeoutMs, queue: parsed.queue as QueueRef, ...(parsed.key !== undefined ? { key: parsed.key } : {}) };
}
