// A run's journal as the pure core sees it: one entry per step call, dense by seq.
import type { ErrorInfo } from './errors.ts';
import type { Json } from './json.ts';
import type { StepKind, StepStatus } from './run-view.ts';

export interface JournalEntry {
  seq: number;
  /** Unique within the run (`name#k` for repeats). */
  name: string;
  kind: StepKind;
  status: StepStatus;
  attempts: number;
  result?: Json;
  error?: ErrorInfo;
  startedAt?: number;
  endedAt?: number;
  /** sleep: when it is due; wait: its deadline (absent = no timeout). */
  wakeAt?: number;
  nextRetryAt?: number;
}
