// Run-level singleton and rate-limit drop (sdk/run-flow.ts) as queues of their own, so both
// backends decide them with the queue machinery they already have (SQLite: QueueManager;
// Restate: the `tqqueue` virtual object, cluster-wide): a singleton is a queue allowing one
// run per key, a rate limit a queue allowing `limit` starts per `period` per key. The run asks
// with `noWait`: a slot now, or refused (SlotRefused) with the runs in the way. Pure.
import type { QueueSpec } from './rate-limit.ts';
import { formatDuration } from './duration.ts';

/** The step names these slots go by in their queues: '#' is in no step name a run's code
 *  can give (step-names.ts), so none is taken for a step's own slot. */
export const SINGLETON_SLOT = '#singleton';
export const RATE_SLOT = '#rate';

/** Queue names no queue() can have (they start with a letter): never confused with one. */
export const singletonQueue = (workflow: string): QueueSpec => ({ name: `~singleton.${workflow}`, limits: { key: { concurrency: 1 } } });
export const rateQueue = (workflow: string, limit: number, periodMs: number): QueueSpec => ({ name: `~rate.${workflow}`, limits: { key: { rate: { limit, periodMs } } } });

/** A `noWait` ask the limits do not allow now. `others`: the runs holding or waiting for a
 *  slot of the same key (whom a singleton in `cancel` mode cancels). */
export class SlotRefused extends Error {
  constructor(readonly others: readonly string[]) {
    super('no slot free now');
    this.name = 'SlotRefused';
  }
}

/** What a skipped run's output says (its code never ran). */
export interface SkippedOutput {
  outcome: 'skipped';
  reason: string;
}

const forKey = (key: string): string => (key === '' ? '' : ` with key '${key}'`);

export function singletonReason(key: string, others: readonly string[]): string {
  const who = others.length > 0 ? `run ${others.join(', ')}` : 'another run';
  return `runs.singleton (mode skip): ${who}${forKey(key)} is unfinished`;
}

export function rateReason(key: string, limit: number, periodMs: number): string {
  return `runs.rateLimit: ${limit} start${limit === 1 ? '' : 's'} per ${formatDuration(periodMs)}${key === '' ? '' : ` for key '${key}'`} reached`;
}

export const skipped = (reason: string): SkippedOutput => ({ outcome: 'skipped', reason });

/** A run that flow control skipped: its reason (explain, `why`). */
export function flowSkipReason(output: unknown): string | undefined {
  const o = output as { outcome?: unknown; reason?: unknown } | null;
  return typeof o === 'object' && o !== null && o.outcome === 'skipped' && typeof o.reason === 'string' ? o.reason : undefined;
}
