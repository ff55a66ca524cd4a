// The drain from SQLite to Restate (docs/restate.md, "Switching a data dir from SQLite"): a
// data dir whose file still holds runs the SQLite backend started and has not finished moves
// to Restate without waiting for them. This executor routes by run: those runs (the drain
// set, recorded in the file at the first Restate start) keep executing on a SQLite executor
// in drain mode, to the end; everything new starts on Restate. Reads answer for both and say
// which backend holds a run (drain-reads.ts).
import type { ApprovalRecord } from '../domain/approval.ts';
import { NotSupportedError } from '../domain/errors.ts';
import type { Attrs } from '../domain/capability.ts';
import type { Json } from '../domain/json.ts';
import type { GcOptions, GcReport } from '../domain/retention.ts';
import type { RetryOptions, RetryResult } from '../domain/retry-point.ts';
import type { ResumeResult } from '../domain/run-control.ts';
import type { HeldPolicy, WorkflowPause } from '../domain/workflow-pause.ts';
import type { QueueSummary } from '../domain/queue-summary.ts';
import type { RunFilter, RunPage, RunView } from '../domain/run-view.ts';
import type { DurableExecutor, EmitRequest, EmitResult, StartRunRequest } from '../ports/executor.ts';
import type { TriggerState } from '../ports/triggers.ts';
import type { Debouncer } from '../ports/debounce.ts';
import { DrainReads } from './drain-reads.ts';

export interface DrainRouterOptions {
  /** The Restate executor: every new run, event, trigger and approval. */
  primary: DurableExecutor;
  /** The SQLite executor in drain mode, executing only the ids in `drained`. */
  local: DurableExecutor;
  /** Filled by start() from `adopt`; the local executor reads the same set. */
  drained: Set<string>;
  /** Opens the file, records the runs SQLite has in flight as drained, returns every drained id. */
  adopt(): Promise<string[]>;
  /** Closes the file when start() fails before the primary owns it. */
  release(): Promise<void>;
}

export class DrainRouter implements DurableExecutor {
  readonly backend: string;
  private localStarted = false;
  private reads: DrainReads | undefined;

  constructor(private readonly o: DrainRouterOptions) {
    this.backend = o.primary.backend;
  }

  /** The Restate executor (diagnostics and tests reach its admin API through it). */
  get primary(): DurableExecutor {
    return this.o.primary;
  }

  get triggers(): TriggerState {
    return this.o.primary.triggers;
  }

  /** Debounced triggers are new work: Restate's. */
  get debouncer(): Debouncer | undefined {
    return this.o.primary.debouncer;
  }

  async start(): Promise<void> {
    let ids: string[];
    try {
      ids = await this.o.adopt();
    } catch (err) {
      await this.o.release();
      throw err;
    }
    for (const id of ids) this.o.drained.add(id);
    await this.o.primary.start();
    if (this.o.drained.size === 0) return;
    try {
      await this.o.local.start();
    } catch (err) {
      await this.o.primary.stop();
      throw err;
    }
    this.localStarted = true;
    this.reads = new DrainReads(this.o.primary, this.o.local, this.o.drained);
  }

  async stop(): Promise<void> {
    // The local side first: the primary closes the file they share.
    if (this.localStarted) await this.o.local.stop();
    await this.o.primary.stop();
  }

  /** The executor that holds this run. */
  private of(runId: string): DurableExecutor {
    return this.localStarted && this.o.drained.has(runId) ? this.o.local : this.o.primary;
  }

  startRun(req: StartRunRequest): Promise<{ runId: string; created: boolean }> {
    return this.o.primary.startRun(req);
  }

  emit(req: EmitRequest): Promise<EmitResult> {
    return this.o.primary.emit(req);
  }

  signal(runId: string, name: string, payload: Json): Promise<void> {
    return this.of(runId).signal(runId, name, payload);
  }

  getRun(runId: string): Promise<RunView | undefined> {
    return this.reads ? this.reads.getRun(runId) : this.o.primary.getRun(runId);
  }

  listRuns(filter: RunFilter): Promise<RunPage> {
    return this.reads ? this.reads.listRuns(filter) : this.o.primary.listRuns(filter);
  }

  cancel(runId: string, by: string): Promise<void> {
    return this.of(runId).cancel(runId, by);
  }

  retry(runId: string, options: RetryOptions): Promise<RetryResult> {
    return this.of(runId).retry(runId, options);
  }

  /** docs/control.md: by the executor that holds the run. */
  pause(runId: string, by: string): Promise<void> {
    const ex = this.of(runId);
    if (!ex.pause) throw new NotSupportedError(`backend '${ex.backend}' cannot pause runs yet`);
    return ex.pause(runId, by);
  }

  resume(runId: string): Promise<ResumeResult> {
    const ex = this.of(runId);
    if (!ex.resume) throw new NotSupportedError(`backend '${ex.backend}' cannot resume runs yet`);
    return ex.resume(runId);
  }

  /** docs/control.md "Pause a workflow": new runs start on the primary, so its pause holds
   *  them; the drained runs were executing before it and go on. */
  pauseWorkflow(workflow: string, by: string): Promise<WorkflowPause> {
    if (!this.o.primary.pauseWorkflow) throw new NotSupportedError(`backend '${this.o.primary.backend}' cannot pause workflows yet`);
    return this.o.primary.pauseWorkflow(workflow, by);
  }

  resumeWorkflow(workflow: string, held: HeldPolicy): Promise<string[]> {
    if (!this.o.primary.resumeWorkflow) throw new NotSupportedError(`backend '${this.o.primary.backend}' cannot resume workflows yet`);
    return this.o.primary.resumeWorkflow(workflow, held);
  }

  async workflowPauses(): Promise<WorkflowPause[]> {
    return (await this.o.primary.workflowPauses?.()) ?? [];
  }

  /** Queues are the primary's: new work runs there (a drained backend's slots are its own). */
  async queueSummaries(now: number): Promise<QueueSummary[]> {
    return (await this.o.primary.queueSummaries?.(now)) ?? [];
  }

  async waitForTerminal(runId: string, timeoutMs: number): Promise<RunView> {
    const ex = this.of(runId);
    const v = await ex.waitForTerminal(runId, timeoutMs);
    return this.reads ? { ...v, heldBy: ex === this.o.local ? 'sqlite' : 'restate' } : v;
  }

  async idle(): Promise<void> {
    if (this.localStarted) await this.o.local.idle();
    await this.o.primary.idle();
  }

  approvals(workflow: string): Promise<ApprovalRecord[]> {
    return this.o.primary.approvals ? this.o.primary.approvals(workflow) : Promise.resolve([]);
  }

  /** Stored on both sides: a drained run blocked on SQLite is released by the same approval. */
  async approveFile(approval: ApprovalRecord): Promise<string[]> {
    const released = this.o.primary.approveFile ? await this.o.primary.approveFile(approval) : [];
    if (this.localStarted && this.o.local.approveFile) released.push(...(await this.o.local.approveFile(approval)));
    return released;
  }

  async wakeParked(capability: string, attrs: Attrs): Promise<void> {
    if (this.localStarted) await this.o.local.wakeParked?.(capability, attrs);
    await this.o.primary.wakeParked?.(capability, attrs);
  }

  gc(options: GcOptions): Promise<GcReport> {
    if (!this.o.primary.gc) throw new NotSupportedError(`backend '${this.backend}' has no retention`);
    return this.o.primary.gc(options);
  }
}
