// Parent-child links of runs in the SQLite file (migration 9, docs/children.md). Every
// method runs inside the caller's transaction (the commit queue's or a read).
import type Database from 'better-sqlite3';
import { MAX_CHILD_DEPTH, childEnd, childSignal, cycleMessage, depthMessage, type ChildSummary, type ParentLink } from '../../domain/child-runs.ts';
import { ValidationError, type ErrorInfo } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import type { RunView } from '../../domain/run-view.ts';
import type { ChildStartRequest } from '../../ports/executor.ts';

interface LinkRow {
  run_id: string;
  parent_run_id: string;
  parent_step: string;
  depth: number;
  on_parent_cancel: ParentLink['onParentCancel'];
}

const TERMINAL = new Set<RunStatus>(['succeeded', 'failed', 'cancelled']);

export class RunLinks {
  private readonly s;
  /** Whether the file holds any link: known (and kept) only by the file's owner, the one
   *  writer (ownedFile), so a file without child runs pays no lookup per run view or end. */
  private any: boolean | undefined;

  constructor(db: Database.Database) {
    const q = (sql: string) => db.prepare(sql);
    this.s = {
      get: q(`SELECT * FROM run_links WHERE run_id = ?`),
      insert: q(`INSERT INTO run_links (run_id, parent_run_id, parent_step, depth, on_parent_cancel) VALUES (?, ?, ?, ?, ?)`),
      children: q(`SELECT l.run_id, l.parent_step, r.workflow, r.status FROM run_links l JOIN runs r ON r.run_id = l.run_id
                   WHERE l.parent_run_id = ? ORDER BY r.created_seq`),
      status: q(`SELECT status, workflow FROM runs WHERE run_id = ?`),
      anyLink: q(`SELECT EXISTS (SELECT 1 FROM run_links) AS n`),
      openChild: q(`SELECT EXISTS (SELECT 1 FROM run_links l JOIN runs r ON r.run_id = l.run_id
                  WHERE l.parent_run_id = ? AND r.status NOT IN ('succeeded', 'failed', 'cancelled')) AS n`),
      childIds: q(`SELECT l.run_id FROM run_links l JOIN runs r ON r.run_id = l.run_id WHERE l.parent_run_id = ? ORDER BY r.created_seq`),
    };
  }

  /** Called by the file's owner: from now on this object sees every link written. */
  ownedFile(): void {
    this.any = (this.s.anyLink.get() as { n: number }).n === 1;
  }

  parentOf(runId: string): ParentLink | undefined {
    if (this.any === false) return undefined;
    const r = this.s.get.get(runId) as LinkRow | undefined;
    return r && { runId: r.parent_run_id, step: r.parent_step, depth: r.depth, onParentCancel: r.on_parent_cancel };
  }

  children(runId: string): ChildSummary[] {
    if (this.any === false) return [];
    return (this.s.children.all(runId) as { run_id: string; parent_step: string; workflow: string; status: RunStatus }[]).map((r) => ({
      runId: r.run_id, workflow: r.workflow, step: r.parent_step, status: r.status,
    }));
  }

  childIds(runId: string): string[] {
    return (this.s.childIds.all(runId) as { run_id: string }[]).map((r) => r.run_id);
  }

  /** Adds `parent` and (withChildren) `children` to a run's view. */
  decorate(v: RunView, withChildren: boolean): RunView {
    const p = this.parentOf(v.runId);
    if (p) v.parent = p;
    if (withChildren) {
      const c = this.children(v.runId);
      if (c.length > 0) v.children = c;
    }
    return v;
  }

  /** Before a child's run is inserted: refuses a cycle, a depth past the limit, or an id
   *  taken by a run that is not this step's child. `exists`: a run of that id exists already.
   *  Returns the link to insert, or undefined when the child exists (a replay, a crash). */
  check(req: ChildStartRequest, exists: boolean): ParentLink | undefined {
    const { parent } = req;
    if (exists) {
      const link = this.parentOf(req.runId);
      if (link && link.runId === parent.runId && link.step === parent.step) return undefined;
      const chain = this.ancestors(parent.runId);
      if (chain.includes(req.runId)) throw new ValidationError(cycleMessage(req.runId, chain));
      throw new ValidationError(`run '${req.runId}' already exists and is not the child of step '${parent.step}' of run ${parent.runId}; give the child another runId`);
    }
    const depth = (this.parentOf(parent.runId)?.depth ?? 0) + 1;
    if (depth > MAX_CHILD_DEPTH) throw new ValidationError(depthMessage(req.runId, depth));
    return { runId: parent.runId, step: parent.step, depth, onParentCancel: parent.onParentCancel };
  }

  insert(runId: string, l: ParentLink): void {
    this.s.insert.run(runId, l.runId, l.step, l.depth, l.onParentCancel);
    // Set before the commit: a rolled back insert leaves it true, which only costs lookups.
    if (this.any === false) this.any = true;
  }

  /** The run and its ancestors, nearest first (bounded: a link chain cannot loop, as a
   *  child is always inserted after its parent). */
  private ancestors(runId: string): string[] {
    const chain = [runId];
    for (let l = this.parentOf(runId); l && chain.length <= MAX_CHILD_DEPTH + 1; l = this.parentOf(l.runId)) chain.push(l.runId);
    return chain;
  }

  /** Whether `runId` has a child that has not ended. */
  hasOpenChild(runId: string): boolean {
    return (this.s.openChild.get(runId) as { n: number }).n === 1;
  }

  /** Inside the transaction that ended run `runId`: the end signal for its parent, when it
   *  has one that has not ended. Returns the parent to wake once that commits. */
  ended(
    runId: string, status: 'succeeded' | 'failed' | 'cancelled', now: number, insertSignal: (runId: string, name: string, payload: Json, now: number) => void,
    output?: Json, error?: ErrorInfo,
  ): string | undefined {
    const link = this.parentOf(runId);
    if (!link) return undefined;
    const parent = this.s.status.get(link.runId) as { status: RunStatus } | undefined;
    if (!parent || TERMINAL.has(parent.status)) return undefined;
    const child = this.s.status.get(runId) as { workflow: string } | undefined;
    insertSignal(link.runId, childSignal(runId), childEnd(runId, status, { workflow: child?.workflow, output, error }) as Json, now);
    return link.runId;
  }
}
