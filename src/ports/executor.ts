// DurableExecutor: what the engine needs from a backend. SQLite and Restate implement it;
// callers never branch on which backend they hold.
import type { ApprovalRecord } from '../domain/approval.ts';
import type { Attrs } from '../domain/capability.ts';
import type { Json } from '../domain/json.ts';
import type { ParentCancelPolicy } from '../domain/child-runs.ts';
import type { RetryOptions, RetryResult } from '../domain/retry-point.ts';
import type { RunFilter, RunPage, RunView } from '../domain/run-view.ts';
import type { GcOptions, GcReport } from '../domain/retention.ts';
import type { TriggerState } from './triggers.ts';
import type { ResumeResult } from '../domain/run-control.ts';
import type { HeldPolicy, WorkflowPause } from '../domain/workflow-pause.ts';
import type { Debouncer } from './debounce.ts';
import type { RunFork } from '../domain/run-fork.ts';
import type { JournalEntry } from '../domain/journal.ts';
import type { QueueSummary } from '../domain/queue-summary.ts';

export interface StartRunRequest {
  workflow: string;
  input: Json;
  /** Caller's id: a second start with the same id returns the first run. */
  runId: string;
  /** The W3C trace context stored with the run (docs/observability.md): every execution's
   *  span is its child, so the run is one trace across restarts. */
  traceparent?: string;
  /** The trigger's run timeout (ms), overriding the workflow's (docs/control.md). */
  timeoutMs?: number;
  /** runs.rerun: the finished run this one reruns (stored with it, shown both ways).
   *  runs.fork sets it too: a fork is a rerun from a step. */
  rerunOf?: string;
  /** runs.fork (docs/control.md): the run is written at the original's `version` with the
   *  journal `entries` (the original's recorded steps before `from`), in the same write. */
  fork?: RunFork & { version: string };
}

/** A run started by another run's step (docs/children.md). */
export interface ChildStartRequest extends StartRunRequest {
  parent: { runId: string; step: string; onParentCancel: ParentCancelPolicy };
}

export interface EmitRequest {
  name: string;
  payload: Json;
  /** Dedup id: the same id twice starts nothing new. */
  id: string;
  /** Stored with every run the event creates (StartRunRequest.traceparent). */
  traceparent?: string;
}

/** What engine.emit did. */
export interface EmitResult {
  /** The runs the event started (the first emit's, for a duplicate); empty: no subscriber. */
  runIds: string[];
  /** The event id was seen before: nothing new was started. */
  duplicate: boolean;
}

/** What a metrics scrape reads of the runs now (docs/observability.md). */
export interface RunGauges {
  /** Runs not finished, by status (pending, running, sleeping, waiting, retrying, parked, blocked). */
  byStatus: Record<string, number>;
  /** Runs due to execute that wait for a slot (config maxConcurrentRuns). */
  queued: number;
  /** Runs executing in this process now. */
  executing: number;
}

export interface DurableExecutor {
  readonly backend: string;
  /** The gauges of the runs now, read synchronously (a metrics scrape); absent: this backend
   *  offers none. */
  gauges?(): RunGauges;
  start(): Promise<void>;
  stop(): Promise<void>;
  startRun(req: StartRunRequest): Promise<{ runId: string; created: boolean }>;
  /** Starts a run linked to its parent (stored with the child, shown in both views), in one
   *  durable write with the link; idempotent by runId. Refuses with ValidationError a cycle
   *  (the id is the parent's or an ancestor's), a depth past MAX_CHILD_DEPTH, or an id taken
   *  by a run that is not this step's child. When the child ends, the parent gets the signal
   *  `childSignal(id)` carrying its ChildEnd (unless the parent already ended). Absent: this
   *  backend has no child runs yet. */
  startChild?(req: ChildStartRequest): Promise<{ runId: string; created: boolean }>;
  emit(req: EmitRequest): Promise<EmitResult>;
  signal(runId: string, name: string, payload: Json): Promise<void>;
  getRun(runId: string): Promise<RunView | undefined>;
  /** The run's journal as recorded (runs.fork copies from it), completion order included;
   *  undefined for an unknown run. Absent: the engine reads the run's step views instead
   *  (domain/run-fork.ts entriesOfViews). */
  journal?(runId: string): Promise<JournalEntry[] | undefined>;
  listRuns(filter: RunFilter): Promise<RunPage>;
  /** `by`: who asks (already validated); recorded with the time of the first cancel, shown
   *  as RunView.cancel. */
  cancel(runId: string, by: string): Promise<void>;
  /** Resumes a failed run at the earliest failed `do` or `use` step (or `options.from`), discarding
   *  that step's record and everything recorded after it (domain/retry-point.ts); says what
   *  it discarded. An unknown `from` is refused and changes nothing. */
  retry(runId: string, options: RetryOptions): Promise<RetryResult>;
  /** docs/control.md. A paused run goes on (what came due meanwhile runs now); a cancelled
   *  run continues from the step its cancel reached (resumePlan). Anything else is refused
   *  (RunStateError) and changes nothing. Absent: this backend cannot resume runs. */
  resume?(runId: string): Promise<ResumeResult>;
  /** Pauses a live run at its next step boundary (a body running now finishes and is
   *  recorded); while paused it holds no process memory and no concurrency slot. `by`: who
   *  asks (validated). Absent: this backend cannot pause runs. */
  pause?(runId: string, by: string): Promise<void>;
  /** Pauses a whole workflow (docs/control.md, "Pause a workflow"): every run of it created
   *  from now on is created as always and held before its code runs; runs already executing
   *  go on. The first asker stays. Absent: this backend cannot pause workflows. */
  pauseWorkflow?(workflow: string, by: string): Promise<WorkflowPause>;
  /** Unpauses it: its held runs, in creation order, go on (`run`) or end skipped (`skip`);
   *  returns their ids. RunStateError when the workflow is not paused. */
  resumeWorkflow?(workflow: string, held: HeldPolicy): Promise<string[]>;
  /** The paused workflows, by name. */
  workflowPauses?(): Promise<WorkflowPause[]>;
  /** The flow-control queues now (RunReader.queueSummaries): engine.queues.list, the Runs panel. */
  queueSummaries?(now: number): Promise<QueueSummary[]>;
  /** Resolves with the view once the run is terminal; rejects with TimeoutError after timeoutMs. */
  waitForTerminal(runId: string, timeoutMs: number): Promise<RunView>;
  /** Resolves when nothing can make progress without time passing or a signal. */
  idle(): Promise<void>;
  /** Workflow files (docs/runner.md, Approval); only a backend that runs them has these.
   *  The workflow's stored approvals, newest first. */
  approvals?(workflow: string): Promise<ApprovalRecord[]>;
  /** Stores the approval and releases the workflow's `blocked` runs it now allows (they
   *  start); returns their ids. */
  approveFile?(approval: ApprovalRecord): Promise<string[]>;
  /** Resumes the runs parked on `capability` whose affinity `attrs` contains (a provider
   *  with those attributes was just registered); each looks for a provider again. */
  wakeParked?(capability: string, attrs: Attrs): Promise<void>;
  /** Run-level debounce (docs/flow-control.md); absent: this backend cannot debounce. */
  readonly debouncer?: Debouncer;
  /** Event inbox, schedules, slot ledger, webhook secrets. */
  readonly triggers: TriggerState;
  /** Retention (docs/data.md): removes finished runs older than the configured age with
   *  their journal and inbox rows, in small batches; `dryRun` only reports. */
  gc?(options: GcOptions): Promise<GcReport>;
}
