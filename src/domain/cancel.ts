// Cancel with cleanup (docs/semantics.md `## Cancel`): how long a cancelled run's cleanup may
// run before the run ends anyway, unless the engine config says otherwise; and who asked.
export const DEFAULT_CANCEL_GRACE_MS = 60_000;

/** runs.cancel's options: `by` names who asks (recorded with the time; `why` says it). */
export interface CancelOptions {
  by?: string;
}

/** The asker recorded when runs.cancel is given none. */
export const DEFAULT_CANCEL_BY = 'api';

/** The longest `by` accepted (it is shown in one sentence). */
export const MAX_CANCEL_BY = 200;
