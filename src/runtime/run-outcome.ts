// How one execution of a run ended. The executor turns it into the run row's next state.
import type { ErrorInfo } from '../domain/errors.ts';
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';

export type RunOutcome =
  | { type: 'succeeded'; output: Json }
  | { type: 'failed'; error: ErrorInfo }
  | { type: 'cancelled' }
  /** `entry` (if any) must be recorded in the same transaction as the run's new status. */
  | { type: 'suspended'; status: 'sleeping' | 'waiting' | 'retrying'; wakeAt?: number; entry?: JournalEntry };
