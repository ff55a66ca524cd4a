// Cancel with cleanup (docs/semantics.md `## Cancel`): how long a cancelled run's cleanup may
// run before the run ends anyway, unless the engine config says otherwise.
export const DEFAULT_CANCEL_GRACE_MS = 60_000;
