// RunReader: how anything outside a running engine (the CLI's reading commands), and the
// engine itself, reads runs from the backend that ran them. One implementation per backend:
// SQLite reads its file (read-only from another process); Restate asks the admin API, never
// the local file's outbox rows for a run Restate has accepted.
import type { ChildOutput, RunFilter, RunPage, RunView } from '../domain/run-view.ts';
import type { OutboxEntry } from './trigger-store.ts';
import type { WorkflowPause } from '../domain/workflow-pause.ts';
import type { QueueSummary } from '../domain/queue-summary.ts';

export interface RunReader {
  /** The run with its steps; undefined when this backend knows no such run. */
  getRun(runId: string): Promise<RunView | undefined>;
  /** One page of runs, newest first, without their steps (`steps: []`); `next` when more match. */
  listRuns(filter: RunFilter): Promise<RunPage>;
  /** A workflow file's last Deno child for the run (`runs describe`); undefined when none
   *  was kept (a code workflow, or no child ran yet). */
  childOutput?(runId: string): Promise<ChildOutput | undefined>;
  /** The paused workflows (workflows.pause), by name; absent: the backend keeps none. */
  workflowPauses?(): Promise<WorkflowPause[]>;
  /** The flow-control queues with their depth, running and busiest keys at `now`
   *  (domain/queue-summary.ts); absent: the backend keeps none. */
  queueSummaries?(now: number): Promise<QueueSummary[]>;
  /** Releases what the reader opened (a file handle); the engine's own reader owns nothing. */
  close(): Promise<void>;
}

/** Looks a run up in the trigger store's run outbox: what a backend that forwards runs to
 *  another system (Restate) knows locally (written but not accepted yet; a divergence this
 *  engine recorded). */
export type OutboxLookup = (runId: string) => Promise<OutboxEntry | undefined>;
