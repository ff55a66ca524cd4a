// Run control fields on Restate's views (docs/control.md): the deadline, rerun links and
// pause are kept on the run's outbox row (the same table as SQLite's runs), read back here.
import type { RunView } from '../../domain/run-view.ts';
import type { TriggerStore } from '../../ports/trigger-store.ts';

export async function withControl(store: Pick<TriggerStore, 'controlOf'>, v: RunView, withLinks: boolean): Promise<RunView> {
  const c = await store.controlOf?.(v.runId, withLinks);
  if (!c) return v;
  if (c.deadline !== undefined) v.deadline = c.deadline;
  if (c.rerunOf !== undefined) v.rerunOf = c.rerunOf;
  if (c.reruns !== undefined) v.reruns = c.reruns;
  if (c.forkedFrom !== undefined) v.forkedFrom = c.forkedFrom;
  return v;
}
