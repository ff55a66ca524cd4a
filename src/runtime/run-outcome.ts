// How one execution of a run ended. The executor turns it into the run row's next state.
import type { ErrorInfo } from '../domain/errors.ts';
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';

export type RunOutcome =
  | { type: 'succeeded'; output: Json }
  | { type: 'failed'; error: ErrorInfo }
  | { type: 'cancelled' }
  /** `entry` (if any) must be recorded in the same transaction as the run's new status.
   *  `signal`: the name of the signal a waiting run waits for (a log that must listen for
   *  signals itself, like Restate's, needs it; SQLite re-dispatches on any signal). */
  | { type: 'suspended'; status: 'sleeping' | 'waiting' | 'retrying'; wakeAt?: number; entry?: JournalEntry; signal?: string }
  /** The step log failed under the session (not a workflow failure): the executor decides
   *  (the Restate handler rethrows it so Restate retries the invocation). */
  | { type: 'interrupted'; cause: unknown };
