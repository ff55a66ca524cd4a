// Run control (docs/control.md): a run's deadline, its rerun links and its pause, as data.
// Pure: the times are passed in.
import type { ErrorInfo } from './errors.ts';
import { isoTime } from './iso-time.ts';
import type { RecordedStepInfo } from './retry-point.ts';

/** The message of the TimeoutError a run deadline throws starts with this: a replay tells
 *  the deadline's delivery apart from a step's own timeout (or a wait's) by it. */
export const DEADLINE_PREFIX = 'run deadline ';

/** When a run created at `createdAt` must end: the trigger's override, else the workflow's
 *  `timeout`; undefined when neither is set. */
export function deadlineFor(createdAt: number, workflowTimeoutMs: number | undefined, overrideMs?: number): number | undefined {
  const ms = overrideMs ?? workflowTimeoutMs;
  return ms === undefined ? undefined : createdAt + ms;
}

/** What the run's waiting steps get when its deadline passes (recorded like a cancel's). */
export function deadlineError(deadlineAt: number): ErrorInfo {
  return { name: 'TimeoutError', message: `${DEADLINE_PREFIX}${isoTime(deadlineAt)} passed: the run took longer than its timeout` };
}

export function isDeadlineError(e: ErrorInfo | undefined): boolean {
  return e?.name === 'TimeoutError' && typeof e.message === 'string' && e.message.startsWith(DEADLINE_PREFIX);
}

/** Who paused a run and when (ISO), shown on its view while it is paused. */
export interface PauseInfo {
  by: string;
  at: string;
  /** Held by the pause of its whole workflow before any of its code ran (workflows.pause):
   *  `by` is `workflow pause (by <who>)`, `at` when the workflow was paused. */
  held?: true;
}

/** The run-control fields of a run's view. */
export interface ControlView {
  /** When the run must end (its timeout), ISO. */
  deadline?: string;
  /** This run was started by runs.rerun of that run. */
  rerunOf?: string;
  /** Runs started by runs.rerun or runs.fork of this one, oldest first (runs.get only). */
  reruns?: string[];
  /** This run was started by runs.fork of `rerunOf` from this step (its position and name):
   *  the steps before it reused the original's recorded outcomes. */
  forkedFrom?: { seq: number; name: string };
  /** Set while the run is paused. */
  paused?: PauseInfo;
}

/** What runs.resume did (docs/control.md): a paused run went on; or a cancelled run continues
 *  from the step its cancel reached (`from`, which runs again), every recorded step from
 *  there on (its cleanup too) discarded; absent `from`: the cancel reached no step, the run
 *  replays from the top with nothing discarded. */
export interface ResumeResult {
  resumed: 'paused' | 'cancelled';
  from?: { seq: number; name: string };
  discarded: RecordedStepInfo[];
}

/** The continuation of a cancelled run with these recorded steps: at the earliest step the
 *  cancel was thrown into. */
export function resumePlan(steps: readonly ((RecordedStepInfo & { error?: ErrorInfo }) | undefined)[]): ResumeResult {
  const sorted = steps.filter((s): s is RecordedStepInfo & { error?: ErrorInfo } => s !== undefined).sort((a, b) => a.seq - b.seq);
  const point = sorted.find((s) => s.error?.name === 'CancelledError');
  if (!point) return { resumed: 'cancelled', discarded: [] };
  return {
    resumed: 'cancelled',
    from: { seq: point.seq, name: point.name },
    discarded: sorted.filter((s) => s.seq >= point.seq).map(({ seq, name, kind, status }) => ({ seq, name, kind, status })),
  };
}
