// How one execution of a run ended. The executor turns it into the run row's next state.
import type { ErrorInfo } from '../domain/errors.ts';
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';

export type RunOutcome =
  | { type: 'succeeded'; output: Json }
  | { type: 'failed'; error: ErrorInfo }
  | { type: 'cancelled' }
  /** Every branch of the run is blocked. `entries` must be recorded in the same transaction
   *  as the run's new status. It wakes at `wakeAt` (the earliest due time, if any) or when a
   *  signal named in `signals` arrives (a log that listens for signals itself, like Restate's,
   *  needs the names; SQLite re-dispatches on any signal). */
  | { type: 'suspended'; status: 'sleeping' | 'waiting' | 'retrying' | 'parked'; wakeAt?: number; entries: JournalEntry[]; signals: string[] }
  /** The step log failed under the session (not a workflow failure): the executor decides
   *  (the Restate handler rethrows it so Restate retries the invocation). */
  | { type: 'interrupted'; cause: unknown };
