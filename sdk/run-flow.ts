// Run-level flow control beyond a run's queue slot (docs/flow-control.md, issue 39): a
// workflow's `runs.singleton` (one unfinished run per key: `skip` a new one, or `cancel` the
// running one for it) and `runs.rateLimit` (starts over `limit` per `period` are dropped,
// recorded as skipped). Inngest's `singleton` and `rateLimit` are the models. Validated when
// the workflow is defined; the key functions when a run is asked for.
import * as z from 'zod';
import { readDuration } from '../src/domain/duration.ts';
import { keyFromInput, positiveDuration, positiveLimit, runQueueSchema, type RunQueueOptions } from './queue.ts';
import type { Duration } from './types.ts';

/** `runs.singleton`: at most one unfinished run per key. */
export interface SingletonOptions<I = any> {
  /** `skip`: a run asked for while one of its key is unfinished is not started (it ends at
   *  once, skipped, with the reason). `cancel`: the unfinished one is cancelled and the new
   *  one starts once it has ended. */
  mode: 'skip' | 'cancel';
  /** The run's key from its input (per user, per tenant); absent: one key for every run. */
  key?: (input: I) => string;
}

/** `runs.rateLimit`: at most `limit` runs start in any window of `period` (sliding), per key;
 *  a run over it is not started: it ends at once, skipped, with the reason. */
export interface RunRateLimitOptions<I = any> {
  limit: number;
  period: Duration;
  key?: (input: I) => string;
}

/** A workflow's `runs` option: a queue slot per run (`queue`, `key`, `priority`), and the
 *  controls of this file. */
export interface RunOptions<I = any> extends Partial<RunQueueOptions<I>> {
  singleton?: SingletonOptions<I>;
  rateLimit?: RunRateLimitOptions<I>;
}

const keyFn = z.custom<(input: unknown) => string>((v) => typeof v === 'function', { error: 'expected a function of the input returning a string' });

export const runOptionsSchema = runQueueSchema
  .extend({
    queue: runQueueSchema.shape.queue.optional(),
    singleton: z.object({ mode: z.enum(['skip', 'cancel']), key: keyFn.optional() }).strict().optional(),
    rateLimit: z.object({ limit: positiveLimit, period: positiveDuration, key: keyFn.optional() }).strict().optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (!o.queue && !o.singleton && !o.rateLimit) ctx.addIssue({ code: 'custom', message: 'give queue, singleton or rateLimit' });
    for (const f of ['key', 'priority'] as const) if (o[f] && !o.queue) ctx.addIssue({ code: 'custom', path: [f], message: 'needs runs.queue (the key and priority of a run\'s queue slot)' });
  });

/** Where `runs.singleton` and `runs.rateLimit` put a run, from its input: the keys (a key
 *  function that throws or returns no string is refused in one line naming it). */
export interface RunFlowKeys {
  singleton?: string;
  rate?: string;
}

export function runFlowKeysOf(workflow: string, runs: RunOptions | undefined, input: unknown): RunFlowKeys {
  if (!runs) return {};
  return {
    ...(runs.singleton ? { singleton: keyFromInput(`workflow '${workflow}' runs.singleton.key`, runs.singleton.key, input) } : {}),
    ...(runs.rateLimit ? { rate: keyFromInput(`workflow '${workflow}' runs.rateLimit.key`, runs.rateLimit.key, input) } : {}),
  };
}

/** `runs.rateLimit.period` in ms (validated at definition). */
export function ratePeriodMs(r: RunRateLimitOptions): number {
  return readDuration(r.period) as number;
}

// Keys and priority read from the input (fromInput) belong to these options; exported here too
// so the engine's own chunk carries them (a file's description is made again with them), not
// a chunk of their own that every start would load beside it (test/e2e/build.test.ts).
export { fromInput, inputPathOf, inputPathSchema } from './from-input.ts';
