// What a backend offers for run-level debounce (docs/flow-control.md, Debounce): a pending
// burst per workflow and key, durable, that becomes one run with the last input when it is due.
import type { Json } from '../domain/json.ts';

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
}

/** What a debounced trigger did. */
export interface DebounceResult {
  /** The id of the run the burst becomes: the same for every trigger of the burst. */
  runId: string;
  /** This trigger opened the burst (false: it joined one and replaced its input). */
  created: boolean;
  /** When the burst's run starts unless another trigger joins it (epoch ms). */
  dueAt: number;
}

export interface Debouncer {
  debounce(req: DebounceRequest): Promise<DebounceResult>;
  /** Whether `runId` is a burst's run not created yet (pending, or started a moment ago and
   *  not visible in the run views yet). */
  debouncing(runId: string): Promise<boolean>;
}
