// The `run` handler of a Tranquil workflow on Restate: one invocation per run. It holds no
// replay decisions: it drives the shared RunSession over a RestateStepLog and turns each
// outcome into Restate terms (docs/restate.md has the mapping):
// - suspended: wait durably (ctx.sleep, the next signal's durable promise), then run the
//   session again from the top, as the SQLite executor does after a wake;
// - failed: park (the run shows `failed`); runs.retry resolves `~retry#<cycle>` and the run
//   resumes with the journal truncated at the retry point (domain retryPlan);
// - cancelled: parked (the run shows `cancelled`); runs.resume resolves `~continue#<cycle>`
//   and the run goes on from the step the cancel reached (run-continue.ts); after the park's
//   TTL or a further cancel, Restate's CancelledError ends it;
// - paused (runs.pause): held on `~resume#k` at a step boundary (run-pause.ts);
// - diverged: recorded outside Restate, then ended.
// Views are kept in workflow state (`~run`, `~meta`, `~s<p>`), read by the engine over SQL.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import type { ApprovalRecord } from '../../domain/approval.ts';
import { CancelledError, toErrorInfo, type ErrorInfo } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import { retryPlan } from '../../domain/retry-point.ts';
import type { CancelInfo, ChildOutput, RunView, StepView } from '../../domain/run-view.ts';
import type { RegisteredWorkflow } from '../../runtime/registry.ts';
import type { SessionOptions } from '../../runtime/session-factory.ts';
import { sessionFor, type FileSessionFactory } from '../../runtime/session-factory.ts';
import type { WorkflowDefinition } from '../../../sdk/workflow.ts';
import { APPROVALS_OBJECT, type ApprovalsObject } from './approvals-object.ts';
import { RestateStepLog } from './step-log.ts';
import { parkOf, type CapabilityRequest } from '../../domain/capability.ts';
import type { ParkState } from './parked-awakeables.ts';
import { identityCodec, type PayloadCodec } from '../../domain/payload-codec.ts';
import { sealJson } from '../../domain/payload-codec.ts';
import { sealPayloads } from './run-views.ts';
import { childEnd, childSignal } from '../../domain/child-runs.ts';
import type { ChildStartRequest } from '../../ports/executor.ts';
import { signalQueueKey, signalQueueName, type DeliverRequest } from './signal-queue.ts';
import { serviceName } from './workflow-service.ts';
import type { QueueCatalog } from './queue-slot.ts';
import { RunSlot } from './run-slot.ts';
import { cancelEach } from './singleton-cancel.ts';
import { skipped } from '../../domain/run-flow.ts';
import { RunPause } from './run-pause.ts';
import { WORKFLOW_PAUSE_OBJECT, type WorkflowPauseObject } from './workflow-pause-object.ts';
import { CANCEL_CYCLE, cancelPromise, continuePromise, type ContinueRequest } from './run-continue.ts';
import { resumePlan } from '../../domain/run-control.ts';
import type { PauseInfo } from '../../domain/run-control.ts';

export interface RunHooks {
  /** Publishes an event (dedup by id) from inside a journaled ctx.run. */
  emit(req: { name: string; payload: Json; id: string }): Promise<unknown>;
  /** The code no longer matches the journal: record it outside Restate and end the invocation. */
  diverged(runId: string, workflow: string, error: ErrorInfo): Promise<void>;
  /** A run reached succeeded / failed (parked) / cancelled in this process; `view` is its
   *  state as this handler wrote it (durable once Restate completes the invocation). */
  settled(runId: string, view: RunView): void;
  /** Aborted when the engine stops: step bodies in flight are told to stop. */
  stopSignal?: AbortSignal;
  /** Calls a host capability provider (step.use). */
  capability?(req: CapabilityRequest, signal: AbortSignal): Promise<Json | undefined>;
  /** The run parked on capability steps, waiting on the awakeable in `state` (also kept in
   *  workflow state `~park`): the engine resolves it when a matching provider appears. */
  parked?(runId: string, state: ParkState): void;
  /** Payloads are sealed through it before they reach Restate's journal or state. */
  codec?: PayloadCodec;
  /** A workflow file's child ended (any outcome): its pid, exit and bounded output. */
  childOutput?(runId: string, output: ChildOutput): void;
  /** Child runs and signals between runs (docs/children.md), from step bodies. */
  startChild?(req: ChildStartRequest): Promise<{ runId: string; created: boolean }>;
  sendSignal?(runId: string, name: string, payload: Json): Promise<void>;
  /** The queues steps may name (flow control on the queues' objects, queue-slot.ts). */
  queues?: QueueCatalog;
  /** Cancels another run, as runs.cancel (runs.singleton in `cancel` mode). */
  cancelRun?(runId: string, by: string): Promise<void>;
}

/** A child run's parent, as the engine sends it with the run request: where its end goes. */
export interface ParentRef {
  runId: string;
  workflow: string;
}

/** Workflow files (docs/runner.md): their runs execute in Deno children, only once the
 *  version's permission declaration is approved. */
export interface RestateFiles {
  sessions: FileSessionFactory;
  /** The registration now (a trigger may have described a newer version of the file). */
  current(name: string): RegisteredWorkflow | undefined;
  /** Why a run of `version` may not execute given the workflow's approvals; undefined: it may. */
  blockReason(wf: RegisteredWorkflow, version: string, approvals: readonly ApprovalRecord[]): ErrorInfo | undefined;
  /** Per run, in this engine process: invocation attempts whose connected child died with a
   *  cancel there (CANCEL_TRIES ends the run; the SQLite executor keeps the same count). */
  cancelTries: Map<string, number>;
}

/** The durable promise an approval resolves to release a run blocked in its `k`-th look. */
export const releasePromise = (k: number): string => `~release#${k}`;

/** The durable promise the engine resolves with who asks to cancel, before it asks Restate
 *  to cancel the invocation (executor.cancel; the `cancelNote` handler), is
 *  `cancelPromise(cycle)` (run-continue.ts). The first asker of a cycle stays. A cancel from
 *  outside the engine API (Restate's own UI or CLI) leaves it empty. */

/** What `~cancel` holds: who asked, and when (the handler's journaled time, epoch ms). */
export interface CancelNote {
  by: string;
  t: number;
}

/** What `~meta` holds. `control`: the run watches pause and parks after a cancel. */
export interface RunMeta {
  version: string;
  input: Json;
  startedAt?: string;
  control?: boolean;
}

/** The value runs.retry resolves `~retry#<cycle>` with (`true` from engines before `from`). */
export interface RetryRequest {
  /** The step to resume at, as the engine reported it to the caller; absent: the default. */
  from?: string;
  /** When the retry was asked (the retry handler's journaled time): the run's clock moves on. */
  t?: number;
}


export interface RunState {
  status: 'running' | 'sleeping' | 'waiting' | 'retrying' | 'parked' | 'blocked' | 'paused' | 'succeeded' | 'failed' | 'cancelled';
  wakeAt?: string;
  output?: Json;
  error?: ErrorInfo;
  /** A cancelled run: who asked and when (from `~cancel`). */
  cancel?: CancelInfo;
  /** A paused run: who asked and when (from `~pause#k`, run-pause.ts). */
  paused?: PauseInfo;
  /** When the run took this status, on the run's journaled clock: the same in every read and
   *  every replay (the invocation's modified_at moves when Restate suspends or resumes it, so
   *  a view dated by it looked like a new transition: a notification delivered twice). */
  at?: number;
}

/** Fresh per call: a shared never-settling promise would pin every awaiting continuation. */
const never = <T = never>(): Promise<T> => new Promise<T>(() => {});
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const PARK_TTL_MS = 7 * 86_400_000;
/** How long a file run whose session threw (its child ended before its outcome) listens
 *  for a cancel before Restate retries the invocation (a cancel asked during Restate's
 *  backoff is there at once). */
const CANCEL_PROBE_MS = 500;
/** Attempts whose connected child died with a cancel there before that cancel ends the run:
 *  the second could still finish a cleanup cut by a kill from outside (as on SQLite). */
const CANCEL_TRIES = 2;

/** One invocation of a workflow's `run` handler. Lives as long as the invocation. */
export class RestateRun {
  /** What the state writes said, kept to hand engine.result() a view without a query. */
  private readonly written: { meta?: RunMeta; run?: RunState; steps: Map<number, StepView> } = { steps: new Map() };
  private log!: RestateStepLog;
  private pause: RunPause | undefined;
  private control = false;
  /** From the run request (`driver: 1`): the driver takes settled outcomes without a race. */
  eagerDriver = false;
  /** The run asks whether its workflow is paused before its code runs (workflowHold). */
  private heldCheck = false;
  /** How many times the run was cancelled and continued (run-continue.ts). */
  private cancelCycle = 0;
  private parent: ParentRef | undefined;
  /** The run's trace context: every session's execution span is its child. */
  private traceparent: string | undefined;
  /** From the run request (journaled with the invocation): docs/control.md. */
  private deadline: number | undefined;
  /** runs.fork: the recorded steps the run starts with (from its run request). */
  private fork: JournalEntry[] | undefined;

  private readonly def: WorkflowDefinition;
  /** The run's own slot (workflow option runs.queue), if it has one. */
  private slot!: RunSlot;

  constructor(
    private readonly rctx: restate.WorkflowContext,
    private readonly wf: RegisteredWorkflow,
    private readonly version: string,
    private readonly hooks: RunHooks,
    private readonly limits: Omit<SessionOptions, 'stepDefaults'> = {},
    private readonly files?: RestateFiles,
  ) {
    this.def = wf.definition;
  }

  private get runId(): string {
    return this.rctx.key;
  }

  private get codec(): PayloadCodec {
    return this.hooks.codec ?? identityCodec;
  }

  /** For what this handler writes outside journaled closures (state views, its output, its
   *  parent's notice): a replay writes them again and Restate compares them with the journal,
   *  so they seal to the same bytes (a random nonce made every encrypted replay fail, 570). */
  private replayCodecOf: PayloadCodec | undefined;
  private sealKey: string | undefined;
  private get replayCodec(): PayloadCodec {
    return (this.replayCodecOf ??= this.codec.forReplay?.(this.rctx.request().id, this.sealKey) ?? this.codec);
  }

  /** `control`: the run request asked for run control (pause, resume of a cancel); a run
   *  forwarded by an engine from before it replays with the journal it started with. */
  async execute(input: Json, parent?: ParentRef, traceparent?: string, deadline?: number, control = false, fork?: JournalEntry[], heldCheck = false): Promise<Json> {
    this.control = control;
    this.heldCheck = control && heldCheck;
    this.fork = fork;
    this.parent = parent;
    this.traceparent = traceparent;
    this.deadline = deadline;
    try {
      return await this.invoke(input);
    } finally {
      this.log?.dispose();
    }
  }

  private async invoke(input: Json): Promise<Json> {
    // The version is journaled with the start: state writes are compared on replay, so
    // everything written must come from the journal, not from the code now running.
    // With the key its replay-compared writes are sealed with (replayCodec): after a key
    // rotation a replay must write what the first execution wrote.
    const start = await this.rctx.run('~start', () => ({ t: Date.now(), version: this.version, ...(this.codec.activeKeyId ? { k: this.codec.activeKeyId } : {}) }));
    this.sealKey = (start as { k?: string }).k;
    this.written.meta = { version: start.version, input, startedAt: iso(start.t), ...(this.control ? { control: true } : {}) };
    this.rctx.set('~meta', sealPayloads(this.replayCodec, this.written.meta, ['input']));
    // The run's trace context with its state (the request that carried it is journaled too).
    if (this.traceparent !== undefined) this.rctx.set('~trace', this.traceparent);
    this.log = new RestateStepLog(this.rctx, this.def.name, JSON.stringify(input), start.t, {
      emit: (req) => this.hooks.emit(req),
      stepChanged: (step) => this.setStep(step),
      capability: this.hooks.capability,
      startChild: this.hooks.startChild,
      sendSignal: this.hooks.sendSignal,
      queues: this.hooks.queues,
      timerFired: this.limits.telemetry?.meters && ((ms) => this.limits.telemetry!.meters!.timerFired(ms)),
    }, this.hooks.stopSignal, this.codec);
    this.log.driver.eager = this.eagerDriver;
    this.log.deadline = this.deadline;
    // A fork's reused steps are the log's entries before anything runs: the session hands
    // their outcomes back without a command, and their views are written as the run's.
    for (const entry of this.fork ?? []) await this.log.record(entry);
    if (this.control) {
      this.pause = new RunPause({
        ctx: this.rctx, driver: this.log.driver,
        showPaused: (paused) => this.setRun({ status: 'paused', paused }),
        advance: (t) => this.log.advance(t),
      });
    }
    // Its workflow paused (workflows.pause): held before anything of its code runs and
    // before it takes its slot (docs/control.md); decided once, journaled.
    let held: Awaited<ReturnType<RestateRun['workflowHold']>> = 'go';
    if (this.heldCheck) {
      held = await this.workflowHold();
      if (held === 'cancelled') throw await this.endCancelled();
      if (typeof held === 'object') return this.endSkipped(held.skip);
    }
    // Run-level flow control: in line before anything of the run is written (it shows pending).
    this.slot = new RunSlot(this.log, this.def, input, this.hooks.cancelRun && ((ids, by) => this.cancelOthers(ids, by)));
    let cycle = 0;
    for (;;) {
      const admitted = await this.admit(cycle);
      if (admitted === true) break;
      if (typeof admitted === 'string') return this.endSkipped(admitted);
      cycle++;
    }
    if (this.pause) {
      this.log.pauseRequested = () => this.pausing();
      // A held run's resume already watches the next cycle (RunPause.hold).
      if (held === 'go') this.pause.watch();
    }
    this.setRun({ status: 'running' });
    if (this.wf.file) await this.awaitApproval(start.version);
    for (;;) {
      this.log.beginSession();
      const outcome = this.log.cancelRequested() ? ({ type: 'cancelled' } as const) : await this.runSession(start.version);
      switch (outcome.type) {
        case 'succeeded':
          // Awaited: a run of its key asked once this one shows succeeded finds the key free.
          await this.slot.leave();
          this.setRun({ status: 'succeeded', output: outcome.output });
          this.notifyParent('succeeded', outcome.output);
          this.hooks.settled(this.runId, this.view());
          // The invocation's output is journaled by Restate too: sealed.
          return sealJson(this.replayCodec, outcome.output);
        case 'cancelled':
          // Parked: runs.resume continues it (run-continue.ts); else it ends cancelled.
          if (!this.control) throw await this.endCancelled();
          await this.parkCancelled();
          continue;
        case 'interrupted':
          // Not the workflow's failure (a transport or SDK error): Restate retries the invocation.
          throw outcome.cause;
        case 'suspended':
          for (const entry of outcome.entries) await this.log.record(entry);
          if (!this.pausing()) {
            this.setRun({ status: outcome.status, wakeAt: iso(outcome.wakeAt) });
            const provided = this.awaitProvider(outcome.entries);
            await this.log.suspend(outcome.wakeAt, outcome.signals, provided, this.log.cancelled ? undefined : this.pause?.branch()).catch((err) => {
              // Cancelled while suspended: the next session throws it into the code (cleanup).
              if (!this.log.cancelled) throw err;
            });
            if (provided) this.rctx.clear('~park');
          }
          // Asked to pause (docs/control.md): held until resumed or cancelled (run-pause.ts).
          if (this.pausing()) await this.pause!.hold();
          this.setRun({ status: 'running' });
          continue;
        case 'failed':
          if (outcome.error.name === 'NonDeterminismError') {
            // Further commands would not match the recorded journal: end it from outside.
            await this.hooks.diverged(this.runId, this.def.name, outcome.error);
            return never();
          }
          // A failed run holds no slot while parked; a retry asks again.
          await this.slot.leave();
          await this.park(outcome.error, cycle++);
          while ((await this.admit(cycle)) !== true) cycle++;
          continue;
      }
    }
  }

  /** Whether the workflow is paused: a shared read of its object (no lock) and, only when it
   *  is, the object's `hold`, which notes this run's pause and lists it; then the run waits
   *  on that pause as any paused run (RunPause.hold). Journaled calls: a replay decides the
   *  same. 'go': not paused (or resumed before the hold). */
  private async workflowHold(): Promise<'go' | 'resumed' | 'cancelled' | { skip: string }> {
    const obj = this.rctx.objectClient<WorkflowPauseObject>({ name: WORKFLOW_PAUSE_OBJECT }, this.def.name);
    try {
      if (!(await this.log.driver.await(obj.peek()))) return 'go';
      if (!(await this.log.driver.await(obj.hold({ runId: this.runId })))) return 'go';
    } catch (err) {
      // Nothing of it ran: a cancel now ends it.
      if (err instanceof CancelledError) return 'cancelled';
      throw err;
    }
    return this.pause!.hold();
  }

  /** A pause was seen and no cancel came: no further step starts, the run holds. */
  private pausing(): boolean {
    return !!this.pause?.requested() && !this.log.cancelled;
  }

  /** One session; a workflow file's child output is handed on, whatever the outcome. */
  private async runSession(version: string) {
    const session = this.session(version);
    try {
      const outcome = await session.run();
      this.files?.cancelTries.delete(this.runId);
      return outcome;
    } catch (err) {
      if (this.wf.file && !this.hooks.stopSignal?.aborted && (await this.cancelEnds(session.connected))) throw await this.endCancelled();
      throw err;
    } finally {
      if (session.output) this.hooks.childOutput?.(this.runId, session.output);
    }
  }

  /** In-process for a code workflow; a Deno child serving this invocation's step log for a
   *  workflow file (a replayed invocation spawns a child that replays). */
  private session(version: string) {
    const wf = (this.wf.file && this.files?.current(this.def.name)) || this.wf;
    return sessionFor(this.log, wf, version, { stepDefaults: this.def.stepDefaults, ...this.limits, traceparent: this.traceparent }, this.files?.sessions);
  }

  /** A file's session threw: its child ended before its outcome (killed, or looking killed:
   *  exit 137 under bwrap), at every start perhaps. Such a child may await nothing Restate
   *  could deliver the cancel to (it dies before it connects, or replays recorded steps and
   *  dies before a new one), so the invocation was retried for ever. Whether the cancel that
   *  is there now ends the run: at once if the child never connected (nothing of the code
   *  ran to clean up, as while blocked); else on the CANCEL_TRIES-th such attempt (the
   *  attempts between offer the cancel to a new child, for its cleanup). */
  private async cancelEnds(connected: boolean | undefined): Promise<boolean> {
    // A probe that fails (the invocation is closing): the session's own error goes on.
    if (!(await this.cancelArrived().catch(() => false))) return false;
    if (connected === false) return true;
    const tries = this.files?.cancelTries;
    const n = (tries?.get(this.runId) ?? 0) + 1;
    if (n < CANCEL_TRIES) tries?.set(this.runId, n);
    else tries?.delete(this.runId);
    return n >= CANCEL_TRIES;
  }

  /** Whether Restate delivered a cancel to this invocation, waiting at most CANCEL_PROBE_MS.
   *  Awaits the invocation's cancel signal (ContextInternal.cancellation(): a signal handle,
   *  no journal command, so a replay that takes another path does not mismatch); with
   *  automatic cancellation it never resolves but rejects with the cancel once there is one. */
  private async cancelArrived(): Promise<boolean> {
    if (this.log.cancelled) return true;
    // The dead child's server no longer holds the driver's races (it may not have let go
    // yet when the session gave up on it first).
    this.log.settleWith(undefined);
    const signal = (this.rctx as unknown as restate.internal.ContextInternal).cancellation();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((r) => (timer = setTimeout(r, CANCEL_PROBE_MS)));
    try {
      await this.log.driver.await(restate.RestatePromise.race([signal, restate.RestatePromise.resolve(waited) as unknown as restate.RestatePromise<void>]));
    } catch (err) {
      if (err instanceof CancelledError) return true;
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return this.log.cancelled;
  }

  /** Nothing of a file runs before its version's declaration is approved: the run shows
   *  `blocked` with the reason (`why` names the command) until an approval releases it. The
   *  approvals are read through a journaled call, so a replay decides as the first time. */
  private async awaitApproval(version: string): Promise<void> {
    const files = this.files;
    if (!files) return; // no runner: sessionFor ends the run with NotSupportedError
    for (let k = 0; ; k++) {
      const approvals = await this.log.driver.await(this.rctx.objectClient<ApprovalsObject>({ name: APPROVALS_OBJECT }, this.def.name).list());
      const reason = files.blockReason(files.current(this.def.name) ?? this.wf, version, approvals);
      if (!reason) return;
      this.setRun({ status: 'blocked', error: reason });
      this.rctx.set('~gate', k);
      try {
        await this.log.driver.await(this.rctx.promise<boolean>(releasePromise(k)).get());
      } catch (err) {
        // Nothing ran yet, so nothing to clean up: a cancel while blocked ends the run.
        throw err instanceof CancelledError ? await this.endCancelled() : err;
      }
      this.setRun({ status: 'running' });
    }
  }

  /** Waits for the run's own slots (run-slot.ts); false: its key or priority function
   *  failed, and the run was parked failed with that error until a retry; a string: the run
   *  is skipped (runs.singleton, runs.rateLimit), for that reason. */
  private async admit(cycle: number): Promise<boolean | string> {
    try {
      return (await this.slot.acquire(cycle === 0)) ?? true;
    } catch (err) {
      // Cancelled in line: it has left the line, and nothing of its code ran.
      if (err instanceof CancelledError) throw await this.endCancelled();
      await this.park(toErrorInfo(err), cycle);
      return false;
    }
  }

  /** Skipped by flow control before any of its code ran: it ends succeeded with output
   *  { outcome: 'skipped', reason } (src/domain/run-flow.ts), as on SQLite. */
  private endSkipped(reason: string): Json {
    const output = skipped(reason) as unknown as Json;
    this.slot?.release();
    this.setRun({ status: 'succeeded', output });
    this.notifyParent('succeeded', output);
    this.hooks.settled(this.runId, this.view());
    return sealJson(this.replayCodec, output);
  }

  /** runs.singleton in `cancel` mode: the runs of the key are cancelled (one journaled step;
   *  a run that already ended is no error; a failed cancel is tried again, singleton-cancel.ts). */
  private async cancelOthers(ids: string[], by: string): Promise<void> {
    // Through the driver: a cancel of this run delivered meanwhile is the engine's
    // CancelledError (the run ends cancelled), not a failure that parked it.
    await this.log.driver.await(this.rctx.run('~singleton-cancel', () => cancelEach(ids, (id) => this.hooks.cancelRun!(id, by)).then(() => null)));
  }

  /** The run ends cancelled (shown with who asked, the engine told); Restate's error to throw. */
  private async endCancelled(): Promise<restate.CancelledError> {
    await this.slot?.leave();
    this.files?.cancelTries.delete(this.runId);
    const cancel = await this.cancelNote();
    this.setRun(cancel ? { status: 'cancelled', cancel } : { status: 'cancelled' });
    this.notifyParent('cancelled');
    this.hooks.settled(this.runId, this.view());
    return new restate.CancelledError();
  }

  /** Parked cancelled: the run shows `cancelled` (its parent told, result() answered) until
   *  runs.resume resolves `~continue#<cycle>`: then the journal is cut at the step the cancel
   *  was thrown into and the run goes on. After PARK_TTL_MS, or at a further cancel, the
   *  invocation ends cancelled. */
  private async parkCancelled(): Promise<void> {
    const end = await this.endCancelled();
    const c = this.cancelCycle;
    const asked = this.rctx.promise<ContinueRequest>(continuePromise(c)).get();
    let woke: ContinueRequest | 'ttl';
    try {
      woke = await this.log.driver.await(restate.RestatePromise.race([asked, this.rctx.sleep(PARK_TTL_MS, '~cancelled').map(() => 'ttl' as const)]));
    } catch (err) {
      throw err instanceof CancelledError ? end : err;
    }
    if (woke === 'ttl') throw end;
    if (typeof woke?.t === 'number') this.log.advance(woke.t);
    this.log.beginSession(); // entries as recorded, the cleanup included
    const plan = resumePlan(this.log.entries);
    if (plan.from) {
      this.log.truncate(plan.from.seq);
      for (const d of plan.discarded) {
        this.written.steps.delete(d.seq);
        this.rctx.clear(`~s${d.seq}`);
      }
    }
    this.log.cancelTaken();
    this.cancelCycle = c + 1;
    this.rctx.set(CANCEL_CYCLE, this.cancelCycle);
    this.pause?.renew();
    this.setRun({ status: 'running' });
  }

  /** Parked failed: the run shows `failed` until runs.retry resolves `~retry#<cycle>` (then
   *  the failed step is reset and the run goes on) or the park outlives its TTL. */
  private async park(error: ErrorInfo, cycle: number): Promise<void> {
    this.setRun({ status: 'failed', error });
    this.notifyParent('failed', undefined, error);
    this.rctx.set('~cycle', cycle);
    this.hooks.settled(this.runId, this.view());
    let woke: 'retry' | 'ttl';
    try {
      woke = await this.log.driver.await(
        restate.RestatePromise.race([
          this.rctx.promise<boolean>(`~retry#${cycle}`).get().map(() => 'retry' as const),
          this.rctx.sleep(PARK_TTL_MS, '~park').map(() => 'ttl' as const),
        ]),
      );
    } catch (err) {
      // A failed run has nothing to clean up: a cancel while parked ends it.
      throw err instanceof CancelledError ? await this.endCancelled() : err;
    }
    if (woke === 'ttl') throw new restate.TerminalError(`${error.name}: ${this.replayCodec.encode(error.message)}`);
    const asked = await this.log.driver.await(this.rctx.promise<RetryRequest | boolean>(`~retry#${cycle}`).get());
    const req: RetryRequest = typeof asked === 'object' && asked !== null ? asked : {};
    if (typeof req.t === 'number') this.log.advance(req.t);
    this.log.beginSession(); // entries as recorded, the failure included
    // The engine checked `from` against the same steps; a name gone missing since falls
    // back to the default point rather than failing a parked run.
    const plan = retryPlan(this.log.entries, req.from) ?? retryPlan(this.log.entries);
    if (plan?.from) {
      this.log.truncate(plan.from.seq);
      for (const d of plan.discarded) {
        this.written.steps.delete(d.seq);
        this.rctx.clear(`~s${d.seq}`);
      }
    }
    this.setRun({ status: 'running' });
  }

  /** Capability steps parked in this suspension: one awakeable the engine resolves when a
   *  matching provider appears (parked-awakeables.ts); undefined when none parked. */
  private awaitProvider(entries: readonly { status: string; error?: ErrorInfo }[]): restate.RestatePromise<{ t?: number } | null> | undefined {
    const parks = entries.flatMap((e) => {
      const p = e.status === 'parked' ? parkOf(e.error) : undefined;
      return p ? [p] : [];
    });
    if (parks.length === 0) return undefined;
    const a = this.rctx.awakeable<{ t?: number } | null>();
    const state: ParkState = { awakeable: a.id, parks };
    this.rctx.set('~park', state);
    this.hooks.parked?.(this.runId, state);
    return a.promise;
  }

  /** Who asked to cancel: `~cancel` as the engine resolved it before asking Restate (a
   *  journaled peek, so a replay reads the same); undefined for a cancel from elsewhere. */
  private async cancelNote(): Promise<CancelInfo | undefined> {
    try {
      const peek = this.rctx.promise<CancelNote>(cancelPromise(this.cancelCycle)).peek() as unknown as restate.RestatePromise<CancelNote | undefined>;
      const note = await this.log.driver.await(peek);
      return note && typeof note.by === 'string' && typeof note.t === 'number' ? { by: note.by, at: new Date(note.t).toISOString() } : undefined;
    } catch (err) {
      // A further cancel while reading it: the run ends all the same, without the asker.
      if (err instanceof CancelledError) return undefined;
      throw err;
    }
  }

  /** A child run's end, sent to its parent's signal queue as a journaled one-way call:
   *  exactly once per end (a retried child that ends again sends its new end). A parent that
   *  already ended refuses it (409), which changes nothing. */
  private notifyParent(status: 'succeeded' | 'failed' | 'cancelled', output?: Json, error?: ErrorInfo): void {
    const p = this.parent;
    if (!p) return;
    const name = childSignal(this.runId);
    const payload = sealJson(this.replayCodec, childEnd(this.runId, status, { workflow: this.def.name, output, error }) as Json);
    this.rctx.genericSend({
      service: signalQueueName(serviceName(p.workflow)), method: 'deliver', key: signalQueueKey(p.runId, name),
      parameter: { runId: p.runId, name, payload } satisfies DeliverRequest, inputSerde: restate.serde.json,
    });
  }

  private setRun(status: RunState): void {
    const s: RunState = this.log ? { ...status, at: this.log.now() } : status;
    this.written.run = s;
    this.rctx.set('~run', sealPayloads(this.replayCodec, s, ['output', 'error']));
  }

  private setStep(step: StepView): void {
    this.written.steps.set(step.seq, step);
    this.rctx.set(`~s${step.seq}`, sealPayloads(this.replayCodec, step, ['result', 'error']));
  }

  private view(): RunView {
    const run = this.written.run;
    const v: RunView = {
      runId: this.runId,
      workflow: this.def.name,
      version: this.written.meta?.version ?? this.version,
      status: run?.status ?? 'running',
      input: this.written.meta?.input ?? null,
      createdAt: this.written.meta?.startedAt ?? new Date(this.log.now()).toISOString(),
      updatedAt: new Date(Math.max(this.log.now(), Date.now())).toISOString(),
      steps: [...this.written.steps.values()].sort((a, b) => a.seq - b.seq),
    };
    if (run?.output !== undefined) v.output = run.output;
    if (run?.error !== undefined) v.error = run.error;
    if (run?.status === 'cancelled' && run.cancel) v.cancel = run.cancel;
    return v;
  }
}
