// Paused workflows on SQLite (migration 15, docs/control.md "Pause a workflow"): the
// `workflow_pauses` table, and the runs it holds (`runs.pause_held = 1`). A run is held in the
// transaction that creates it (SqliteStore.insertRun), so a run created while its workflow is
// paused is born `paused`: every way a run is created (trigger, event, schedule slot, webhook,
// child start, debounce) goes through that insert.
import type Database from 'better-sqlite3';
import { isoTime } from '../../domain/iso-time.ts';
import { heldBy, type WorkflowPause } from '../../domain/workflow-pause.ts';

type PauseRow = { workflow: string; paused_by: string; paused_at: number };

export class WorkflowPauseRows {
  private readonly s;

  constructor(private readonly db: Database.Database) {
    const q = (sql: string) => db.prepare(sql);
    this.s = {
      all: q(`SELECT workflow, paused_by, paused_at FROM workflow_pauses ORDER BY workflow`),
      // Read in the transaction that inserts each run (one primary-key lookup, no cache: a
      // rolled-back pause must not hold runs).
      one: q(`SELECT workflow, paused_by, paused_at FROM workflow_pauses WHERE workflow = ?`),
      pause: q(`INSERT INTO workflow_pauses (workflow, paused_by, paused_at) VALUES (?, ?, ?) ON CONFLICT (workflow) DO NOTHING`),
      unpause: q(`DELETE FROM workflow_pauses WHERE workflow = ?`),
      hold: q(`UPDATE runs SET status = 'paused', pause_by = @by, pause_at = @at, pause_held = 1 WHERE run_id = @run_id`),
      held: q(`SELECT run_id FROM runs WHERE workflow = ? AND status = 'paused' AND pause_held = 1 ORDER BY created_seq`),
    };
  }

  list(): WorkflowPause[] {
    return (this.s.all.all() as PauseRow[]).map((r) => ({ workflow: r.workflow, by: r.paused_by, at: isoTime(r.paused_at) }));
  }

  /** Inside a transaction: pauses the workflow (the first asker stays); false if it was. */
  pause(workflow: string, by: string, now: number): boolean {
    return this.s.pause.run(workflow, by, now).changes > 0;
  }

  /** Inside a transaction: unpauses it and returns its held runs, in creation order (they
   *  stay `paused` and held: the caller resumes or skips each). undefined: it was not paused. */
  unpause(workflow: string): string[] | undefined {
    const was = this.s.unpause.run(workflow).changes > 0;
    return was ? (this.s.held.all(workflow) as { run_id: string }[]).map((r) => r.run_id) : undefined;
  }

  isPaused(workflow: string): boolean {
    return this.s.one.get(workflow) !== undefined;
  }

  /** Inside the transaction that inserted the run: held if its workflow is paused. */
  holdIfPaused(runId: string, workflow: string): boolean {
    const p = this.s.one.get(workflow) as PauseRow | undefined;
    if (!p) return false;
    this.s.hold.run({ run_id: runId, by: heldBy(p.paused_by), at: p.paused_at });
    return true;
  }
}
