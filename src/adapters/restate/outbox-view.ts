// The view of a run the engine wrote to its outbox that Restate does not show (yet): not
// accepted, accepted but not yet visible to admin queries, or refused for diverged code.
import type { RunView } from '../../domain/run-view.ts';
import type { OutboxEntry } from '../../ports/trigger-store.ts';

const STATUS = { pending: 'pending', forwarded: 'running', failed: 'failed' } as const;

export function outboxView(e: OutboxEntry): RunView {
  const v: RunView = {
    runId: e.runId,
    workflow: e.workflow,
    version: e.version,
    status: STATUS[e.state],
    input: e.input,
    createdAt: new Date(e.createdAt).toISOString(),
    updatedAt: new Date(e.updatedAt).toISOString(),
    steps: [],
  };
  if (e.error !== undefined) v.error = e.error;
  return v;
}

/** The NonDeterminismError recorded for a run whose code diverged from its journal. */
export const divergenceOf = (e: OutboxEntry | undefined) => (e?.state === 'failed' ? e.error : undefined);
