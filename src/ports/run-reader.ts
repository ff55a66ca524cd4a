// RunReader: how anything outside a running engine (the CLI's reading commands), and the
// engine itself, reads runs from the backend that ran them. One implementation per backend:
// SQLite reads its file (read-only from another process); Restate asks the admin API, never
// the local file's outbox rows for a run Restate has accepted.
import type { ErrorInfo } from '../domain/errors.ts';
import type { RunFilter, RunView } from '../domain/run-view.ts';

export interface RunReader {
  /** The run with its steps; undefined when this backend knows no such run. */
  getRun(runId: string): Promise<RunView | undefined>;
  /** Runs, newest first, without their steps (`steps: []`). */
  listRuns(filter: RunFilter): Promise<RunView[]>;
  /** Releases what the reader opened (a file handle); the engine's own reader owns nothing. */
  close(): Promise<void>;
}

/** What a backend that forwards runs to another system (Restate) knows locally about a run:
 *  the outbox row written before forwarding, and a divergence recorded by this engine. */
export interface LocalRun {
  workflow: string;
  /** 'pending' until the backend accepted it; 'failed' with `error` when its code diverged. */
  status: RunView['status'];
  error?: ErrorInfo;
  /** The run as written locally (no steps): the answer while the backend does not show it. */
  view(): RunView;
}

/** Looks a run up in the local outbox / divergence records (the trigger store's run index). */
export type LocalRunIndex = (runId: string) => LocalRun | undefined;
