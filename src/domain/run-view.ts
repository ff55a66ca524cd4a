// The shapes every backend reports, identical on SQLite and Restate (docs/restate.md lists
// where the backends differ).
import type { QueueWait } from './rate-limit.ts';
import type { ErrorInfo } from './errors.ts';
import type { Json } from './json.ts';
import type { RunStatus } from './run-status.ts';
import type { ChildSummary, ParentLink } from './child-runs.ts';
import type { ControlView } from './run-control.ts';

/** `use`: a capability step (step.use, src/domain/capability.ts). `publish`: ctx.publish (published state, docs/live-output.md). */
export type StepKind = 'do' | 'sleep' | 'wait' | 'now' | 'random' | 'emit' | 'use' | 'publish' | 'stream';
/** `parked`: a `use` step with no eligible provider (its error says which capability). */
export type StepStatus = 'running' | 'retrying' | 'sleeping' | 'waiting' | 'parked' | 'succeeded' | 'failed' | 'timedout';

/** One step of a run as its journal records it. */
export interface StepView {
  /** Its position in the run, from 0. */
  seq: number;
  /** Its unique name in the run (a repeated name is `name#2`, ...). */
  name: string;
  kind: StepKind;
  status: StepStatus;
  attempts: number;
  result?: Json;
  error?: ErrorInfo;
  startedAt?: string;
  endedAt?: string;
  nextRetryAt?: string;
  wakeAt?: string;
  /** A retrying step: its retry policy's attempt limit (total attempts, the first included). */
  retryLimit?: number;
}

/** Who asked to cancel a run (`runs.cancel(id, { by })`: 'api' by default, the CLI says
 *  `cli (<user>@<host>)`, the panel 'panel') and when (ISO). The first cancel's asker. */
export interface CancelInfo {
  by: string;
  at: string;
}

/** A run as the engine reports it (runs.get, runs.list, result), the same on every backend;
 *  times are ISO 8601. */
export interface RunView extends ControlView {
  runId: string;
  workflow: string;
  version: string;
  status: RunStatus;
  input: Json;
  output?: Json;
  error?: ErrorInfo;
  createdAt: string;
  updatedAt: string;
  wakeAt?: string;
  /** Set once a cancel was asked through the engine API (both backends record it). */
  cancel?: CancelInfo;
  steps: StepView[];
  /** Set while a data dir drains from SQLite to Restate (docs/restate.md): which backend
   *  executes this run. 'sqlite': started before the switch, finishing on this data dir's
   *  file; 'restate': on Restate. Absent outside a drain (one backend holds every run). */
  heldBy?: 'sqlite' | 'restate';
  /** A child run (docs/children.md): the run and step that started it. */
  parent?: ParentLink;
  /** The child runs this run started, in start order (runs.get and runs describe; absent in lists). */
  children?: ChildSummary[];
  /** A running run whose step waits for a queue slot (src/domain/rate-limit.ts). */
  queued?: QueueWait;
}

/** A workflow file's last Deno child for a run (docs/runner.md): its pid, how it ended, its
 *  output, bounded by the runner (the last 64 KiB of each stream). */
export interface ChildOutput {
  pid: number;
  exit?: string;
  stdout: string;
  stderr: string;
}

/** runs.list's filter: every field narrows the list. */
export interface RunFilter {
  status?: RunStatus;
  workflow?: string;
  /** Runs per page: default 100, at most 10,000. */
  limit?: number;
  /** `next` of the previous page: the runs older than that page's last. */
  cursor?: string;
  /** Only runs created at or after this instant (ISO 8601). */
  since?: string;
  /** Only runs created at or before this instant (ISO 8601). */
  until?: string;
  /** Only the child runs of this run (docs/children.md). */
  parent?: string;
  /** Only runs waiting in line for a slot of this queue, the run itself or one of its steps
   *  (docs/flow-control.md); each view then says where it stands (`queued`). */
  queue?: string;
}

/** One page of runs, newest first; `next` is set when more runs match (pass it as `cursor`). */
export interface RunPage {
  runs: RunView[];
  next?: string;
}

export const DEFAULT_PAGE = 100;

declare const OUTPUT: unique symbol;
/** A run id that carries its workflow's output type: trigger(definition, input) returns one,
 *  and result() of it is typed by the definition. Still a string (calls by name keep working). */
export type RunId<O = unknown> = string & { readonly [OUTPUT]?: O };
/** A run's view with its output typed (result() of a RunId<O>). */
export type TypedRunView<O> = Omit<RunView, 'output'> & { output?: O };
