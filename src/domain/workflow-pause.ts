// Pause of a whole workflow (docs/control.md, "Pause a workflow"): while a workflow is paused,
// every new run of it is created as always (id, input, dedupe recorded) and held before its
// code runs: it shows `paused` with `paused.held` and who paused the workflow. Resume lets the
// held runs go on in creation order, or skips them. Pure: the names and texts both backends
// write, so their views, `why` and skipped outputs read the same.
import type { PauseInfo } from './run-control.ts';

/** A paused workflow: who paused it and when (ISO). */
export interface WorkflowPause {
  workflow: string;
  by: string;
  at: string;
}

/** What a held run's resume does: `run` lets it go on; `skip` ends it without its code
 *  (succeeded, output `{ outcome: 'skipped', reason }`, as flow control's skips). */
export type HeldPolicy = 'run' | 'skip';

/** What workflows.resume did: the held runs it resumed or skipped, in creation order. */
export interface WorkflowResumeResult {
  workflow: string;
  held: HeldPolicy;
  runs: string[];
}

/** `paused.by` of a run held by the workflow's pause. */
export const heldBy = (by: string): string => `workflow pause (by ${by})`;

/** Who paused the workflow, from a held run's `paused.by`. */
export const workflowPauser = (by: string): string => /^workflow pause \(by (.*)\)$/s.exec(by)?.[1] ?? by;

/** `why <workflow>` of a paused workflow. */
export function explainWorkflowPause(p: WorkflowPause): { summary: string; next: string } {
  return {
    summary: `Workflow '${p.workflow}' is paused by ${p.by} at ${p.at}: its new runs (events, schedule slots, webhooks, starts) are created and held before their code runs; runs that were executing go on.`,
    next: `Resume it: \`tranquil workflows resume ${p.workflow}\` (held runs go on in creation order; \`--skip-held\` skips them).`,
  };
}

/** The skipped output's reason of a held run ended by a resume with `held: 'skip'`. */
export const heldSkipReason = (workflow: string): string =>
  `held while workflow '${workflow}' was paused; skipped by its resume (held: 'skip'), its code never ran`;

/** The held run's pause as its view shows it. */
export const heldPause = (p: { by: string; at: string }): PauseInfo => ({ by: heldBy(p.by), at: p.at, held: true });
