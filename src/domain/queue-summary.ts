// A flow-control queue as the Runs panel and `engine.queues.list()` show it (docs/flow-control.md,
// "Watching queues"): its limits, the bodies running and waiting, the busiest keys (bounded, so
// a queue with 100,000 keys costs a page the same), and the starts its rate window counts now.
import type { QueueLimits } from './rate-limit.ts';

/** How many keys a summary carries, the busiest first (running + waiting, then by key). */
export const SUMMARY_KEYS = 10;

export interface QueueKeyCount {
  key: string;
  running: number;
  waiting: number;
}

export interface QueueSummary {
  name: string;
  /** The limits the engine last started with (on Restate: the code asking last gave). */
  limits: QueueLimits;
  /** Bodies (or runs: `runs: { queue }`) holding a slot now. */
  running: number;
  /** Bodies (or runs) in line for a slot: the queue's depth. */
  waiting: number;
  /** The busiest keys (at most SUMMARY_KEYS); the default key is ''. */
  keys: QueueKeyCount[];
  /** How many keys have anything running or waiting (keys may hold more). */
  keyCount: number;
  /** With a queue-wide rate limit: the starts its sliding window counts at `now` (a start
   *  granted but not yet begun counts too, as the limit counts it). */
  started?: number;
}

/** The busiest keys first (running + waiting, then by key), at most `n`. */
export function busiestKeys(keys: Iterable<QueueKeyCount>, n = SUMMARY_KEYS): QueueKeyCount[] {
  return [...keys].sort((a, b) => b.running + b.waiting - (a.running + a.waiting) || a.key.localeCompare(b.key)).slice(0, n);
}
