// Switching a data dir from SQLite to Restate: runs the SQLite backend started and has not
// finished live only in the local file (their journal is the `steps` table); a Restate
// executor cannot execute them. The engine drains them (compose/container.ts: a SQLite
// executor finishes them on the file, see runtime/drain-router.ts), after recording them in
// the file's drain table (SqliteTriggerStore.adoptDrain); the trigger store's
// startedUnfinishedRuns leaves those out. This guard is the safety net under it: a Restate
// executor started without the drain, on a file with such runs, refuses with one line
// instead of stranding them, looking alive. Runs still `pending` (never started) are fine:
// the Restate engine forwards them like any outbox row.
//
// Telling them from this backend's own outbox rows: a data dir never started on Restate
// (no `restate.engine-id` setting yet) has only SQLite runs, so any started unfinished run
// counts; afterwards the outbox rows are only pending, running (forwarded) or failed, so a run
// sleeping, waiting, retrying, parked or blocked is a SQLite one.
import { EngineStateError } from '../../domain/errors.ts';
import type { TriggerStore } from '../../ports/trigger-store.ts';

export const ENGINE_ID_SETTING = 'restate.engine-id';
const SHOWN = 5;

export async function refuseSqliteRunsInFlight(store: TriggerStore, dataDir: string): Promise<void> {
  const everOnRestate = (await store.setting(ENGINE_ID_SETTING)) !== undefined;
  const rows = (await store.startedUnfinishedRuns(1000)).filter((r) => !everOnRestate || r.status !== 'running');
  if (rows.length === 0) return;
  const shown = rows.slice(0, SHOWN).map((r) => `${r.runId} (${r.status})`).join(', ');
  throw new EngineStateError(
    `backend 'restate': ${rows.length}${rows.length === 1000 ? '+' : ''} run(s) started on the SQLite backend have not finished in ${dataDir}: ${shown}${rows.length > SHOWN ? ', ...' : ''}; ` +
      `finish them on backend 'sqlite' first (keep the app or \`tranquil serve\` running with TRANQUIL_BACKEND=sqlite until \`tranquil runs list\` shows none unfinished), then switch`,
  );
}
