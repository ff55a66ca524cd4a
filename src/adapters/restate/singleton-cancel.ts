// runs.singleton in `cancel` mode on Restate: the runs of the key are cancelled before the new
// one takes the slot. A cancel can fail for a moment (a run started a moment ago is not yet
// seen by Restate's introspection: "not yet accepted"; the admin API slow under load). Such
// a failure was once swallowed: the old run kept the key and the burst's survivor waited
// behind it for good. A run that already ended needs no cancel.

const RETRY_MS = [50, 100, 200, 400, 800, 1_000];

/** Cancels each run with `cancel`, retrying a failed cancel until it succeeds, the run has
 *  ended ("already finished"), or `patienceMs` passed (then the error is given back). */
export async function cancelEach(ids: readonly string[], cancel: (runId: string) => Promise<void>, patienceMs = 120_000): Promise<void> {
  await Promise.all(ids.map(async (id) => {
    const deadline = Date.now() + patienceMs;
    for (let i = 0; ; i++) {
      try {
        return await cancel(id);
      } catch (err) {
        if (/already finished/.test((err as Error).message)) return;
        if (Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(i, RETRY_MS.length - 1)]));
      }
    }
  }));
}
