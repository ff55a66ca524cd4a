// Run control rows (migrations 11 and 13, docs/control.md): a run's deadline, its rerun or
// fork link, and its pause, kept on the run's row. The runs table is also the Restate backend's outbox, so
// both backends store and read these here.
import type Database from 'better-sqlite3';
import { isoTime } from '../../domain/iso-time.ts';
import type { RunView } from '../../domain/run-view.ts';

/** The control columns of a run row (NULL before migration 10, and when unset). */
export interface ControlColumns {
  deadline_at?: number | null;
  rerun_of?: string | null;
  pause_by?: string | null;
  pause_at?: number | null;
  /** runs.fork: the step the run was forked from, JSON {seq, name} (migration 14). */
  fork_from?: string | null;
  /** The recorded steps a fork starts with, on a Restate outbox row until forwarded. */
  fork_steps?: string | null;
  /** 1: paused by its workflow's pause before its code ran (migration 15, workflow-pauses.ts). */
  pause_held?: number | null;
}

export class RunControlRows {
  private readonly s;

  constructor(db: Database.Database) {
    const q = (sql: string) => db.prepare(sql);
    this.s = {
      set: q(`UPDATE runs SET deadline_at = ?, rerun_of = ? WHERE run_id = ?`),
      fork: q(`UPDATE runs SET fork_from = ?, fork_steps = ? WHERE run_id = ?`),
      reruns: q(`SELECT run_id FROM runs WHERE rerun_of = ? ORDER BY created_seq`),
      anyRerun: q(`SELECT EXISTS (SELECT 1 FROM runs WHERE rerun_of IS NOT NULL) AS n`),
      // Asked while the run executes: noted (durable), applied at its next step boundary.
      requestPause: q(`UPDATE runs SET pause_at = CASE WHEN pause_by IS NULL THEN @now ELSE pause_at END,
                        pause_by = coalesce(pause_by, @by) WHERE run_id = @run_id`),
      pause: q(`UPDATE runs SET status = 'paused', wake_at = NULL, updated_at = @now,
                 pause_at = CASE WHEN pause_by IS NULL THEN @now ELSE pause_at END, pause_by = coalesce(pause_by, @by) WHERE run_id = @run_id`),
      // A run paused (or asked to pause while it executes) goes on: pending, replayed.
      unpause: q(`UPDATE runs SET status = CASE WHEN status = 'paused' THEN 'pending' ELSE status END,
                   pause_by = NULL, pause_at = NULL, pause_held = NULL, updated_at = @now WHERE run_id = @run_id`),
      paused: q(`SELECT run_id FROM runs WHERE status = 'paused'`),
    };
  }

  /** Inside the transaction that inserted the run: its deadline and rerun link, when any. */
  set(runId: string, deadlineAt: number | undefined, rerunOf: string | undefined): void {
    if (deadlineAt === undefined && rerunOf === undefined) return;
    this.s.set.run(deadlineAt ?? null, rerunOf ?? null, runId);
  }

  /** Inside the transaction that inserted a forked run: its fork point, and (an outbox row of
   *  the Restate backend) the steps it starts with, already through the payload codec. */
  fork(runId: string, from: { seq: number; name: string }, stepsStored?: string): void {
    this.s.fork.run(JSON.stringify(from), stepsStored ?? null, runId);
  }

  reruns(runId: string): string[] {
    return (this.s.reruns.all(runId) as { run_id: string }[]).map((r) => r.run_id);
  }

  /** Notes the pause of a run that executes now (the first asker stays). */
  requestPause(runId: string, by: string, now: number): void {
    this.s.requestPause.run({ run_id: runId, by, now });
  }

  /** The run shows `paused` and wakes for nothing (no wake_at): resume replays it, and what
   *  came due meanwhile (sleeps, wait timeouts, retries) is found due then. */
  pause(runId: string, by: string, now: number): void {
    this.s.pause.run({ run_id: runId, by, now });
  }

  /** Back to `pending`: its next execution replays it and finds what came due meanwhile. */
  unpause(runId: string, now: number): void {
    this.s.unpause.run({ run_id: runId, now });
  }

  /** The control fields of a run's view, from its row. `withLinks`: the reruns too (runs.get). */
  decorate(row: ControlColumns & { run_id: string; status: string }, v: RunView, withLinks: boolean): RunView {
    if (row.deadline_at != null) v.deadline = isoTime(row.deadline_at);
    if (row.rerun_of != null) v.rerunOf = row.rerun_of;
    if (row.fork_from != null) v.forkedFrom = JSON.parse(row.fork_from) as { seq: number; name: string };
    if (row.status === 'paused' && row.pause_by != null && row.pause_at != null) {
      v.paused = { by: row.pause_by, at: isoTime(row.pause_at), ...(row.pause_held === 1 ? { held: true as const } : {}) };
    }
    if (withLinks) {
      const r = this.reruns(row.run_id);
      if (r.length > 0) v.reruns = r;
    }
    return v;
  }
}
