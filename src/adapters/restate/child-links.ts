// Child runs on Restate (docs/children.md): the parent link is kept with the run's outbox row
// in the engine's file (TriggerStore.insertChildRun, in the write that records the run), sent
// with the run request so the child's handler can send its end to its parent
// (run-handler.ts, notifyParent), and read back into the views here.
import type { ChildSummary } from '../../domain/child-runs.ts';
import type { RunFilter, RunPage, RunView } from '../../domain/run-view.ts';
import type { TriggerStore } from '../../ports/trigger-store.ts';
import type { ParentRef } from './run-handler.ts';

type Views = { getRun(runId: string): Promise<RunView | undefined> };
/** The link reads of a TriggerStore (a read-only file gives them too: the CLI). */
export type LinkReads = Pick<TriggerStore, 'parentOf' | 'childRunIds'>;

/** The parent a child's run request names; undefined for a top-level run. */
export async function parentRef(store: TriggerStore, views: Views, runId: string): Promise<ParentRef | undefined> {
  const link = await store.parentOf?.(runId);
  if (!link) return undefined;
  const workflow = (await store.outboxRun(link.runId))?.workflow ?? (await views.getRun(link.runId))?.workflow;
  return workflow === undefined ? undefined : { runId: link.runId, workflow };
}

/** Adds `parent` and (withChildren) `children`, their status as Restate reports it. */
export async function withLinks(store: LinkReads, views: Views, v: RunView, withChildren: boolean): Promise<RunView> {
  const parent = await store.parentOf?.(v.runId);
  if (parent) v.parent = parent;
  if (!withChildren) return v;
  const ids = (await store.childRunIds?.(v.runId)) ?? [];
  const children: ChildSummary[] = [];
  for (const id of ids) {
    const [c, link] = await Promise.all([views.getRun(id), store.parentOf?.(id)]);
    if (c && link) children.push({ runId: id, workflow: c.workflow, step: link.step, status: c.status });
  }
  if (children.length > 0) v.children = children;
  return v;
}

/** runs.list({ parent }): the parent's children (one page, in start order), filtered. */
export async function listChildren(store: LinkReads, views: Views, filter: RunFilter): Promise<RunPage> {
  const ids = (await store.childRunIds?.(filter.parent!)) ?? [];
  const runs: RunView[] = [];
  for (const id of ids) {
    const v = await views.getRun(id);
    if (!v || (filter.status && v.status !== filter.status) || (filter.workflow && v.workflow !== filter.workflow)) continue;
    runs.push(await withLinks(store, views, { ...v, steps: [] }, false));
  }
  return { runs: runs.reverse().slice(0, filter.limit ?? 100) };
}
