// SQL for workflow files (migration 5; docs/runner.md): approved permission declarations
// (keyed by workflow name and declaration hash), blocking/releasing runs that wait for an
// approval, and the last Deno child's output per run. Synchronous like SqliteStore; the
// reading methods work on a read-only connection (the CLI).
import type Database from 'better-sqlite3';
import type { ApprovalRecord } from '../../domain/approval.ts';
import type { ErrorInfo } from '../../domain/errors.ts';
import { permissionsSchema } from '../../domain/permissions.ts';

import type { ChildOutput } from '../../domain/run-view.ts';

/** A run's last child: pid, how it ended, its output (already bounded by the runner). */
export type RunOutput = ChildOutput;

interface ApprovalRow {
  workflow: string;
  hash: string;
  declaration: string;
  approved_at: number;
}

export class FileTables {
  constructor(readonly db: Database.Database) {}

  /** Every approval of `workflow`, newest first. */
  approvals(workflow: string): ApprovalRecord[] {
    const rows = this.db.prepare(`SELECT * FROM workflow_approvals WHERE workflow = ? ORDER BY approved_at DESC, hash`).all(workflow) as ApprovalRow[];
    // A row this engine cannot read is skipped (it approves nothing), never fatal.
    return rows.flatMap((r) => {
      const p = permissionsSchema().safeParse(safeJson(r.declaration));
      return p.success ? [{ workflow: r.workflow, hash: r.hash, declaration: p.data, approvedAt: r.approved_at }] : [];
    });
  }

  /** Stores (or refreshes the time of) an approval. */
  approve(a: ApprovalRecord): void {
    this.db
      .prepare(`INSERT INTO workflow_approvals (workflow, hash, declaration, approved_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (workflow, hash) DO UPDATE SET approved_at = excluded.approved_at, declaration = excluded.declaration`)
      .run(a.workflow, a.hash, JSON.stringify(a.declaration), a.approvedAt);
  }

  blockedRunIds(workflow: string): string[] {
    return (this.db.prepare(`SELECT run_id FROM runs WHERE workflow = ? AND status = 'blocked' ORDER BY created_seq`).all(workflow) as { run_id: string }[]).map((r) => r.run_id);
  }

  /** The run waits for an approval; `reason` is what `why` shows. */
  block(runId: string, reason: ErrorInfo, now: number): void {
    this.db.prepare(`UPDATE runs SET status = 'blocked', error = ?, wake_at = NULL, updated_at = ? WHERE run_id = ?`).run(JSON.stringify(reason), now, runId);
  }

  /** An approval released the run: it is pending again, its reason gone. */
  release(runId: string, now: number): void {
    this.db.prepare(`UPDATE runs SET status = 'pending', error = NULL, updated_at = ? WHERE run_id = ? AND status = 'blocked'`).run(now, runId);
  }

  saveOutput(runId: string, o: RunOutput, now: number): void {
    this.db
      .prepare(`INSERT INTO run_output (run_id, pid, exit, stdout, stderr, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (run_id) DO UPDATE SET pid = excluded.pid, exit = excluded.exit, stdout = excluded.stdout,
                  stderr = excluded.stderr, updated_at = excluded.updated_at`)
      .run(runId, o.pid, o.exit ?? null, o.stdout, o.stderr, now);
  }

  /** Per version of `workflow`: how many stored runs, and how many of them are not finished
   *  (`workflows versions`). */
  runCounts(workflow: string): Map<string, { live: number; stored: number }> {
    const rows = this.db
      .prepare(`SELECT version, SUM(CASE WHEN status IN ('succeeded', 'failed', 'cancelled') THEN 0 ELSE 1 END) AS live, COUNT(*) AS stored
                FROM runs WHERE workflow = ? GROUP BY version`)
      .all(workflow) as { version: string; live: number; stored: number }[];
    return new Map(rows.map((r) => [r.version, { live: r.live, stored: r.stored }]));
  }

  /** Every version a stored run references (any status: a failed run may be retried): what
   *  removeUnreferencedSnapshots must keep after the retention of run data deleted runs. */
  runVersions(): Set<string> {
    return new Set((this.db.prepare(`SELECT DISTINCT version FROM runs`).all() as { version: string }[]).map((r) => r.version));
  }

  output(runId: string): RunOutput | undefined {
    const r = this.db.prepare(`SELECT pid, exit, stdout, stderr FROM run_output WHERE run_id = ?`).get(runId) as { pid: number; exit: string | null; stdout: string; stderr: string } | undefined;
    if (!r) return undefined;
    const o: RunOutput = { pid: r.pid, stdout: r.stdout, stderr: r.stderr };
    if (r.exit != null) o.exit = r.exit;
    return o;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
