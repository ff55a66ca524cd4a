// What a backend offers for run-level debounce (docs/flow-control.md, Debounce): a pending
// burst per workflow and key, durable, that becomes one run with the last input when it is due.
import type { Json } from '../domain/json.ts';
import type { TriggerWrites } from './trigger-store.ts';
import type { PendingBurst } from '../domain/debounce-burst.ts';

export interface DebounceRequest {
  workflow: string;
  /** The burst's key ('' for a workflow without a key function). */
  key: string;
  /** The trigger's input, stored form; the burst keeps the last one. */
  input: Json;
  periodMs: number;
  maxWaitMs?: number;
  /** The run id a burst this trigger opens will use (ignored when it joins one). */
  runId: string;
  traceparent?: string;
  /** A trigger that may come again (an event's id, a schedule slot, a webhook delivery's
   *  Idempotency-Key): it joins a burst once; a second one with this id changes nothing. */
  dedupId?: string;
}

/** A debounced trigger with its dedup id (an event's, a slot's, a webhook delivery's). */
export type BurstTrigger = DebounceRequest & { dedupId: string };

export type { PendingBurst } from '../domain/debounce-burst.ts';

/** What a debounced trigger did. */
export interface DebounceResult {
  /** The id of the run the burst becomes: the same for every trigger of the burst. */
  runId: string;
  /** This trigger opened the burst (false: it joined one and replaced its input). */
  created: boolean;
  /** When the burst's run starts unless another trigger joins it (epoch ms). */
  dueAt: number;
  /** The dedup id had joined a burst already: nothing changed (`runId` is that burst's). */
  duplicate?: boolean;
}

export interface Debouncer {
  debounce(req: DebounceRequest): Promise<DebounceResult>;
  /** Whether `runId` is a burst's run not created yet (pending, or started a moment ago and
   *  not visible in the run views yet). */
  debouncing(runId: string): Promise<boolean>;
  /** Inside a trigger-store write (an event's publish, a schedule slot's firing): the
   *  trigger joins its burst in that write (SQLite) or is recorded there and joins at the
   *  next flush() (Restate), once per dedup id either way. */
  joinInWrite(w: TriggerWrites, t: BurstTrigger, now: number): void;
  /** After such a write (and at start): joins what it recorded and did not join yet. */
  flush(): Promise<void>;
  /** The bursts collecting now, soonest due first. */
  pending(filter?: { workflow?: string; runId?: string }): Promise<PendingBurst[]>;
}
