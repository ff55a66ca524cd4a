// DurableExecutor on one SQLite file with the in-process runner.
//
// Owns: dispatching runs (bounded concurrency), turning each RunSession outcome into the
// run row's next state, the timer source the Scheduler claims (due runs and the schedule
// slots they share a transaction with), start-up recovery, and the waiters of
// engine.result(). The file, its owner lease and the CommitQueue belong to the
// SqliteTriggerStore it is given; every write goes through that queue (group commit), and a
// caller is answered only after its transaction committed.
import { EngineStateError, RunStateError, TimeoutError, UnknownRunError, toErrorInfo, type ErrorInfo } from '../../domain/errors.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import { decodeValue } from '../../domain/value-codec.ts';
import { retryPlan, unknownRetryPoint, type RetryOptions, type RetryResult } from '../../domain/retry-point.ts';
import { isTerminal } from '../../domain/run-status.ts';
import type { RunFilter, RunPage, RunView, StepView } from '../../domain/run-view.ts';
import type { CalendarFactory } from '../../ports/calendar.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ChildStartRequest, DurableExecutor, EmitRequest, EmitResult, RunGauges, StartRunRequest } from '../../ports/executor.ts';
import type { Scheduler, TimerClaim } from '../../ports/scheduler.ts';
import type { RunTelemetry } from '../../ports/telemetry.ts';
import type { StepEventSink } from '../../runtime/step-events.ts';
import type { RunLogOutput } from '../../ports/run-log.ts';
import type { TriggerState } from '../../ports/triggers.ts';
import { publishEvent } from '../../runtime/event-publisher.ts';
import { setLongTimeout } from '../../runtime/long-timer.ts';
import type { WorkflowRegistry } from '../../runtime/registry.ts';
import type { RunOutcome } from '../../runtime/run-outcome.ts';
import { sessionFor, type FileSessionFactory } from '../../runtime/session-factory.ts';
import { SlotFiring } from '../../runtime/slot-firing.ts';
import { deadlineFor, resumePlan, type ResumeResult } from '../../domain/run-control.ts';
import { heldSkipReason, type HeldPolicy, type WorkflowPause } from '../../domain/workflow-pause.ts';
import type { QueueSummary } from '../../domain/queue-summary.ts';
import { emitCheckOf } from '../../runtime/boundary-schemas.ts';
import type { EmitCheck } from '../../runtime/emit-check.ts';
import { ChurnMap } from '../../runtime/churn-map.ts';
import { registerTriggers, triggerState } from '../../runtime/trigger-state.ts';
import type { ApprovalRecord } from '../../domain/approval.ts';
import type { ErrorInfo as BlockReason } from '../../domain/errors.ts';
import type { FileGate } from '../../runtime/file-gate.ts';
import type { RegisteredWorkflow } from '../../runtime/registry.ts';
import type { Session } from '../../runtime/session-factory.ts';
import type { CommitQueue } from './commit-queue.ts';
import { FanInHold } from './fan-in.ts';
import { FileTables } from './file-tables.ts';
import { SqliteQueueStore } from './queue-store.ts';
import { SqliteDebouncer } from './debounce-store.ts';
import { QueueManager, queueSpecsOf } from '../../runtime/queues.ts';
import { RunGate } from '../../runtime/run-gate.ts';
import { RunFlow } from '../../runtime/run-flow.ts';
import { skipped } from '../../domain/run-flow.ts';
import { runFlowKeysOf } from '../../../sdk/run-flow.ts';
import { runKeyOf, runPriorityOf } from '../../../sdk/queue.ts';
import { ParkedRuns } from './parked-runs.ts';
import { contains, parkOf, type Attrs } from '../../domain/capability.ts';
import type { CapabilityRegistry } from '../../runtime/capabilities.ts';
import type { FaultPoints } from './fault-points.ts';
import { toStepView, type CreatedRun, type SqliteStore } from './store.ts';
import type { SqliteTriggerStore } from './trigger-store.ts';
import { SqliteRunReader } from './run-reader.ts';
import { SqliteRetention } from './retention.ts';
import { SqliteRunLog, type ActiveRun, type RunLogHost, type WrittenEntry } from './run-log.ts';
import { DEFAULT_GC_BATCH, DEFAULT_RETENTION_MS, type GcOptions, type GcReport, type RetentionSettings } from '../../domain/retention.ts';

export interface SqliteExecutorOptions {
  /** The data dir's file (opened by start()); runs live in it next to the trigger state. */
  triggerStore: SqliteTriggerStore;
  /** Arms the one timer; this executor registers its due runs and schedule slots into it. */
  scheduler: Scheduler;
  clock: Clock;
  registry: WorkflowRegistry;
  random: () => number;
  maxConcurrentRuns: number;
  /** Cron arithmetic for schedule() triggers. */
  calendar: CalendarFactory;
  /** Test-only named fault points (crash or pause here); absent in production. */
  faults?: FaultPoints;
  /** Largest JSON of a step result (config maxPayloadBytes); default DEFAULT_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes?: number;
  /** How long a cancelled run's cleanup may run (config cancelGrace). */
  cancelGraceMs?: number;
  /** Runs workflow files (the Deno runner); absent: a file's run fails saying so. */
  fileSessions?: FileSessionFactory;
  /** Spans and metrics of runs (docs/observability.md); absent: none. */
  telemetry?: RunTelemetry;
  /** Where ctx.log and step bodies' lines go (config `log.runs`); absent: nowhere. */
  runLog?: RunLogOutput;
  /** Per-step events of the runs this executor executes (runs.subscribe); absent: none. */
  stepEvents?: StepEventSink;
  /** Decides whether a file's run may execute (its declaration approved); with fileSessions. */
  fileGate?: FileGate;
  /** The host's capability providers (step.use): docs/host.md. */
  capabilities?: CapabilityRegistry;
  /** Retention (config retention); absent: the defaults, swept every `sweepEveryMs`. */
  retention?: RetentionSettings & { sweepEveryMs?: number };
  /** On Restate: the runs the SQLite backend had in flight when the data dir switched.
   *  This executor then executes only those, to the end (docs/restate.md, "Switching a data
   *  dir from SQLite"): it registers no trigger, fires no schedule, starts no run, and leaves
   *  the file (which the Restate executor shares) open at stop. An event a drained run emits
   *  goes to `publish` (the Restate side) before its journal entry is recorded: after a
   *  crash in between, the replay publishes again with the same event id, which dedups. */
  drain?: { runIds: ReadonlySet<string>; publish: (req: EmitRequest) => Promise<unknown> };
}

/** Failed executions of a file's run with a cancel asked before that cancel ends it: the
 *  second try could still finish a cleanup cut by a kill from outside. One whose child never
 *  connected counts them all (no code ran). The Restate run handler keeps the same count. */
const CANCEL_TRIES = 2;

/** What execute() needs of a run it has not read yet: set by startRun for a run it just
 *  created (status pending, empty journal, input known), so the first dispatch skips
 *  re-reading the row and the journal. Dropped on cancel and at stop. */
interface FreshRun extends CreatedRun {
  input: Json;
  traceparent?: string;
}

export class SqliteExecutor implements DurableExecutor {
  readonly backend = 'sqlite';

  private store!: SqliteStore;
  private reader!: SqliteRunReader;
  /** Approvals, blocked runs and child output of workflow files (migration 5). */
  private files!: FileTables;
  /** Runs parked on a capability step (step.use). */
  private parked!: ParkedRuns;
  /** Flow control: step bodies waiting for and holding queue slots (src/runtime/queues.ts). */
  private queues!: QueueManager;
  /** Run-level flow control: runs of a workflow with `runs: { queue }` wait for a slot. */
  private runGate!: RunGate;
  private runFlow!: RunFlow;
  private queue!: CommitQueue;
  private retention!: SqliteRetention;
  private logHost!: RunLogHost;
  // ChurnMap, not Map, for the per-run registries: see churn-map.ts (scavenge survivors).
  private readonly active = new ChurnMap<ActiveRun>();
  /** Runs whose due sleeps the wake claim finished, and when: their next execution's log
   *  tells the session (ctx.log writes what the code does after those sleeps). */
  private readonly sleepsWoken = new Map<string, number>();
  /** ctx.emit payloads are checked against the events' declared schemas (docs/values.md). */
  private readonly checkEmit: EmitCheck;
  private readonly ready: string[] = [];
  private readonly readySet = new ChurnMap<true>();
  private readonly fresh = new ChurnMap<FreshRun>();
  private running = 0;
  /** result() callers per run: resolved with the finished view, or failed when the engine stops. */
  private readonly terminalWaiters = new ChurnMap<((v: RunView | Error) => void)[]>();
  private idleWaiters: (() => void)[] = [];
  private started = false;
  private stopping = false;
  private readonly slots: SlotFiring;
  /** Parents whose child ended in a transaction not yet followed by notifyTerminal. */
  private readonly parentsToWake: string[] = [];
  /** Wakes of slow-replaying parents by their children's ends, held so one replay serves many. */
  private readonly fanIn = new FanInHold((id) => this.dispatch(id), (id) => this.store.links.hasOpenChild(id));
  /** Runs whose last advance failed on storage, with how many times in a row. */
  private readonly setbacks = new Map<string, number>();
  /** File runs whose executions failed (threw) with a cancel asked, with how many: one more
   *  try may finish the cleanup (a child killed from outside during it resumes); after two,
   *  the cancel cannot reach the code (a child that dies at every start) and the next try
   *  ends the run. */
  private readonly cancelUndelivered = new Map<string, number>();
  /** Unfinished runs with a cancel asked: their executions (delivering the cancel, its
   *  cleanup, the end of its grace) start without waiting for an engine slot, since every slot
   *  may be held by executions that wait long (steps waiting for a queue slot or a rate
   *  window: seeds 284, 287, 7000547), and the grace bounds how long they run. */
  private readonly cancelling = new Set<string>();

  /** Event inbox, schedules, slot ledger, webhook secrets (the trigger store's). */
  readonly triggers: TriggerState;
  /** Run-level debounce's pending bursts (debounce-store.ts); set at start. */
  private bursts: SqliteDebouncer | undefined;

  get debouncer(): SqliteDebouncer | undefined {
    this.ensureStarted(); // a trigger before start says so, not "not supported"
    return this.bursts;
  }

  constructor(private readonly o: SqliteExecutorOptions) {
    this.slots = new SlotFiring(o.registry, o.calendar);
    this.checkEmit = emitCheckOf(o.registry);
    this.triggers = triggerState(o.triggerStore, { ensureStarted: () => this.ensureStarted(), rescan: () => o.scheduler.rescan(), now: () => this.now() });
  }

  /** Built once at start: every execution's log shares it. */
  private runLogHost(): RunLogHost {
    const self = this;
    const o = this.o;
    return {
      store: this.store,
      queue: this.queue,
      faults: o.faults,
      get stopping() {
        return self.stopping;
      },
      now: () => this.now(),
      random: o.random,
      capability: o.capabilities ? (req, signal) => o.capabilities!.call(req, signal) : undefined,
      drain: o.drain,
      slot: (req, signal) => {
        const conflict = this.runGate.stepConflict(req);
        return conflict ? Promise.reject(conflict) : this.queues.acquire(req, signal);
      },
      slotNow: (req) => (this.runGate.stepConflict(req) ? undefined : this.queues.tryAcquire(req)),
      slotBound: () => this.resolveIdle(),
      setTimer: (at, fn) => o.clock.setTimer(at, fn),
      publish: (event) => this.publish(event).created,
      dispatch: (id) => this.dispatch(id),
      startChild: (req) => this.startChild(req),
      signal: (runId, name, payload) => this.signal(runId, name, payload),
    };
  }

  private makeDebouncer(): SqliteDebouncer {
    return new SqliteDebouncer({
      db: this.store.db,
      commits: this.queue,
      writes: this.o.triggerStore.writes,
      now: () => this.now(),
      armAt: (at) => this.o.scheduler.armAt(at),
      known: (w) => this.o.registry.find(w) !== undefined,
      start: (req, before) => this.insertAndDispatch(req, before),
    });
  }

  get commitStats(): { transactions: number; writes: number } {
    return this.queue.stats;
  }

  async start(): Promise<void> {
    if (this.started) return;
    const file = this.o.triggerStore;
    file.openNow();
    this.store = file.store;
    this.queue = file.queue;
    this.queue.onDrained = () => this.resolveIdle();
    this.reader = new SqliteRunReader(this.store);
    this.files = new FileTables(this.store.db);
    this.parked = new ParkedRuns(this.store.db);
    this.queues = new QueueManager(new SqliteQueueStore(this.store.db, this.queue), () => this.now(), queueSpecsOf(this.o.registry.all().map((r) => r.definition)), {
      setTimer: (at, fn) => this.o.clock.setTimer(at, fn),
    });
    this.runGate = new RunGate(this.queues, (id) => this.dispatch(id));
    this.runFlow = new RunFlow(this.queues, (id) => this.dispatch(id), (id, by) => void this.cancel(id, by).catch(() => {}));
    const r = this.o.retention;
    this.logHost = this.runLogHost();
    // Metrics of the file's work (docs/observability.md): commits, retention, timer lag.
    const meters = this.o.telemetry?.meters;
    if (meters) this.queue.onCommit = (writes, seconds) => meters.committed(writes, seconds);
    this.retention = new SqliteRetention(this.store, this.queue, { maxAgeMs: r?.maxAgeMs ?? DEFAULT_RETENTION_MS, batchSize: r?.batchSize ?? DEFAULT_GC_BATCH, dropVersions: r?.dropVersions }, meters && ((runs, events) => meters.retained(runs, events)));
    if (r?.sweepEveryMs) this.retention.startSweeping(() => this.now(), r.sweepEveryMs, (err) => console.error(`tranquil: retention sweep failed (next one retries): ${(err as Error)?.message ?? err}`));
    this.started = true;
    this.o.faults?.onCrash(() => this.abandon());
    const f = this.o.faults?.hit('after-lease-claim');
    if (f) await f;
    const drain = this.o.drain;
    if (!drain) this.store.transaction(() => registerTriggers(file.writes, this.o.registry, this.slots, this.now()));
    this.o.scheduler.register({ claimDue: (now, batch) => this.claimDue(now, batch), backlog: () => this.ready.length });
    if (!drain) this.o.scheduler.register(this.bursts = this.makeDebouncer());
    // Catch-up: runs that were executing when the last owner stopped or died, then (the
    // scheduler's first scan) every timer that came due while nobody was watching.
    await this.queues.start();
    for (const id of this.store.cancellingRunIds()) this.cancelling.add(id);
    for (const id of this.store.unfinishedRunIds()) if (!drain || drain.runIds.has(id)) this.dispatch(id);
    await this.o.scheduler.start();
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopping) return;
    this.stopping = true;
    this.o.scheduler.stop();
    this.fanIn.clear();
    this.queues?.stop();
    this.retention.stopSweeping();
    const stopping = new EngineStateError('engine stopped');
    for (const act of this.active.values()) act.abort?.(stopping);
    this.ready.length = 0;
    this.readySet.clear();
    this.cancelling.clear();
    this.fresh.clear();
    // In-flight sessions are abandoned, not awaited: their runs stay 'running' in the
    // file and are replayed by the next owner; close() flushes what is queued so acks stay true.
    // A drain's file is the Restate executor's too: that one closes it, after this stop.
    if (!this.o.drain) await this.o.triggerStore.close();
    // A result() still waiting cannot be answered by this engine any more: it fails now
    // instead of holding the process open until its deadline.
    const stopped = new EngineStateError('engine stopped while waiting for a result');
    for (const waiters of this.terminalWaiters.values()) for (const w of waiters) w(stopped);
    this.terminalWaiters.clear();
    this.resolveIdle();
  }

  /** Fault injection only: behave as if the process died here. Nothing is flushed or
   *  released (the lease row stays, as a dead process leaves it) and nothing is written after. */
  private abandon(): void {
    this.stopping = true;
    this.o.scheduler.stop();
    this.fanIn.clear();
    this.queues?.stop();
    this.o.triggerStore.abandon();
    this.resolveIdle();
  }

  /** A drain only finishes what it holds; new runs start on the Restate side (the router). */
  private refuseNewWork(what: string): void {
    if (this.o.drain) throw new EngineStateError(`the SQLite backend is draining (the data dir moved to Restate): it does not ${what}`);
  }

  private ensureStarted(): void {
    if (!this.started || this.stopping) throw new EngineStateError('engine is not started (call engine.start())');
  }

  private now(): number {
    return this.o.clock.now();
  }

  // ---- engine operations -------------------------------------------------------------

  gauges(): RunGauges {
    // Not started (or stopped): no file to read; the in-process counts are still true.
    const byStatus = this.started && !this.stopping ? this.store.countUnfinished() : {};
    return { byStatus, queued: this.ready.length, executing: this.running };
  }

  async startRun(req: StartRunRequest): Promise<{ runId: string; created: boolean }> {
    return this.insertAndDispatch(req);
  }

  /** A child run and its link, in one transaction (run-links.ts says what is refused). */
  async startChild(req: ChildStartRequest): Promise<{ runId: string; created: boolean }> {
    // Called from the parent's step body: the child's trace starts under that attempt's span.
    const trace = this.o.telemetry?.starting('start', req.workflow, req.runId);
    if (trace) req = { ...req, traceparent: trace.traceparent };
    const started = await this.insertAndDispatch(req, () => {
      const link = this.store.links.check(req, this.store.getRunRow(req.runId) !== undefined);
      if (link) this.store.links.insert(req.runId, link);
    });
    trace?.end(started.created);
    const f = this.o.faults?.hit('after-child-start');
    if (f) await f;
    return started;
  }

  /** `before`: inside the run's transaction, before its insert (a child's checks and link). */
  private async insertAndDispatch(req: StartRunRequest, before?: () => void): Promise<{ runId: string; created: boolean }> {
    this.ensureStarted();
    this.refuseNewWork('start a run');
    const wf = this.o.registry.get(req.workflow);
    // Run-level flow control: a key or priority function that throws or gives a bad value is
    // refused now, with nothing stored (a run made by an event or a schedule fails with it instead).
    if (wf.definition.runs) {
      const value = decodeValue(req.input); // as the run's code sees it (undefined, Date, Map...)
      runKeyOf(req.workflow, wf.definition.runs, value);
      runPriorityOf(req.workflow, wf.definition.runs, value);
      runFlowKeysOf(req.workflow, wf.definition.runs, value);
    }
    const inputText = JSON.stringify(req.input);
    let blocked = false;
    let createdAt = 0;
    let deadlineAt: number | undefined;
    const created = await this.queue.enqueue(() => {
      createdAt = this.now();
      before?.();
      const made = this.store.insertRun({ runId: req.runId, workflow: req.workflow, version: req.fork?.version ?? wf.version, input: req.input, inputText, now: createdAt, traceparent: req.traceparent });
      if (made) this.store.control.set(req.runId, (deadlineAt = deadlineFor(createdAt, wf.definition.timeoutMs, req.timeoutMs)), req.rerunOf);
      // runs.fork: the run starts with the original's recorded steps, in the write that makes it.
      if (made && req.fork) {
        this.store.control.fork(req.runId, req.fork.from);
        for (const e of req.fork.entries) this.store.recordStep(req.runId, e);
      }
      // Held by its workflow's pause (insertRun): it stays paused, dispatched at the resume;
      // a file's approval is checked then, at its execution.
      const held = made && this.store.pauses.isPaused(req.workflow);
      // A file whose declaration (of the version it runs: a fork's is the original's) is not
      // approved: the run is created blocked, with the reason.
      const reason = made && !held ? this.blockReason(wf, req.fork?.version ?? wf.version) : undefined;
      if (reason) this.files.block(req.runId, reason, this.now());
      blocked = reason !== undefined || held;
      return made;
    });
    // A fork is not fresh (its journal is not empty): its execution reads its row and steps.
    if (created && !blocked && !this.stopping && req.fork) this.dispatch(req.runId);
    else if (created && !blocked && !this.stopping) {
      // The session gets its own copy: the caller's object must not alias the run's input.
      this.fresh.set(req.runId, { workflow: req.workflow, version: wf.version, inputText, createdAt, input: JSON.parse(inputText) as Json, traceparent: req.traceparent, deadlineAt, rerunOf: req.rerunOf });
      this.dispatch(req.runId);
    }
    return { runId: req.runId, created };
  }

  async emit(req: EmitRequest): Promise<EmitResult> {
    this.ensureStarted();
    this.refuseNewWork('publish an event');
    const result = await this.queue.enqueue(() => this.publish(req));
    for (const id of result.created) this.dispatch(id);
    return { runIds: result.runIds, duplicate: result.duplicate };
  }

  /** Inside a transaction: records the event once and creates one run per subscriber. */
  private publish(req: EmitRequest): { runIds: string[]; duplicate: boolean; created: string[] } {
    const p = publishEvent(this.o.triggerStore.writes, this.o.registry, req, this.now(), this.bursts);
    return { runIds: p.runIds, duplicate: p.duplicate, created: p.created.map((r) => r.runId) };
  }

  async signal(runId: string, name: string, payload: Json): Promise<void> {
    this.ensureStarted();
    const row = this.requireRow(runId);
    if (isTerminal(row.status)) throw new RunStateError(`run ${runId} already finished (${row.status}); signal '${name}' not delivered`);
    await this.queue.enqueue(() => this.store.insertSignal(runId, name, payload, this.now()));
    const act = this.active.get(runId);
    if (act) act.again = true;
    else if (this.store.getRunRow(runId)?.status === 'waiting') this.dispatch(runId);
  }

  // Reads go through the same RunReader the CLI uses on this backend: one code path.
  async getRun(runId: string): Promise<RunView | undefined> {
    this.ensureStarted();
    return this.reader.getRun(runId);
  }

  async listRuns(filter: RunFilter): Promise<RunPage> {
    this.ensureStarted();
    return this.reader.listRuns(filter);
  }

  async journal(runId: string): Promise<JournalEntry[] | undefined> {
    this.ensureStarted();
    return this.store.getRunRow(runId) ? this.store.journal(runId) : undefined;
  }

  async cancel(runId: string, by: string): Promise<void> {
    this.ensureStarted();
    const row = this.requireRow(runId);
    if (isTerminal(row.status)) throw new RunStateError(`run ${runId} already finished (${row.status}); nothing to cancel`);
    const act = this.active.get(runId);
    // A second cancel (or one of a run that cannot execute) ends the run at once; the first
    // throws a CancelledError into the code where it waits so its cleanup can run.
    // A run held by its workflow's pause ran none of its code: it ends at once, as on Restate.
    const force = row.cancel_requested === 1 || act?.cancel === 'requested' || row.status === 'blocked' || (row.status === 'paused' && row.pause_held === 1);
    if (!force) this.cancelling.add(runId);
    if (act) {
      this.tellCancel(runId, act, force ? 'forced' : 'requested');
      await this.queue.enqueue(() => this.store.requestCancel(runId, this.now(), by));
      return;
    }
    if (!force) {
      // A run created and queued but not yet executing would start from its creation-time
      // view (pending, untouched) and never read the cancel: its execution reads the row.
      this.fresh.delete(runId);
      await this.queue.enqueue(() => this.store.requestCancel(runId, this.now(), by));
      // An execution that began while the cancel was being written may have read the row
      // before it: it hears the cancel as an active run would.
      const began = this.active.get(runId);
      if (began?.cancel === 'none') this.tellCancel(runId, began, 'requested');
      this.dispatch(runId);
      return;
    }
    this.dropReady(runId);
    this.cancelling.delete(runId);
    this.fresh.delete(runId);
    await this.queue.enqueue(() => {
      const now = this.now();
      this.store.noteCancel(runId, now, by);
      this.store.finishRun(runId, 'cancelled', now);
      this.childEnded(runId, 'cancelled', now);
    });
    this.notifyTerminal(runId);
  }

  /** An executing run hears its cancel: the session reads `act.cancel` and the abort wakes it. */
  private tellCancel(runId: string, act: ActiveRun, cancel: 'requested' | 'forced'): void {
    act.cancel = cancel;
    act.abort?.(new RunStateError(`run ${runId} was cancelled`));
  }

  async retry(runId: string, options: RetryOptions): Promise<RetryResult> {
    this.ensureStarted();
    this.requireRow(runId);
    // One transaction: the status check, the truncation and the reset see the same run; a
    // refused retry (unknown `from`, not failed) throws before anything is written.
    const result = await this.queue.enqueue(() => {
      const row = this.store.getRunRow(runId)!;
      if (row.status !== 'failed') throw new RunStateError(`run ${runId} is ${row.status}; only a failed run can be retried`);
      const plan = retryPlan(this.store.journal(runId), options.from);
      if (!plan) throw unknownRetryPoint(runId, options.from!);
      if (plan.from) this.store.truncateSteps(runId, plan.from.seq);
      this.store.resetForRetry(runId, this.now());
      return plan;
    });
    this.dispatch(runId);
    return result;
  }

  /** docs/control.md: a paused run goes on; a cancelled one continues where its cancel landed. */
  async resume(runId: string): Promise<ResumeResult> {
    this.ensureStarted();
    this.requireRow(runId);
    let withdrawn: ActiveRun | undefined;
    const result = await this.queue.enqueue((): ResumeResult => {
      const row = this.store.getRunRow(runId)!;
      const now = this.now();
      if (row.status === 'paused' || (row.pause_by != null && !isTerminal(row.status))) {
        this.store.control.unpause(runId, now);
        const act = this.active.get(runId);
        if (act && act.pause !== undefined) {
          act.pause = undefined;
          withdrawn = act;
        }
        return { resumed: 'paused', discarded: [] };
      }
      if (row.status !== 'cancelled') throw new RunStateError(`run ${runId} is ${row.status}; only a paused or a cancelled run can be resumed`);
      const plan = resumePlan(this.store.journal(runId));
      if (plan.from) this.store.truncateSteps(runId, plan.from.seq);
      this.store.resetForRetry(runId, now);
      return plan;
    });
    // Withdrawn before it was applied, and durable now: a child told of it may go on.
    if (withdrawn && withdrawn === this.active.get(runId) && withdrawn.pause === undefined) withdrawn.pauseListener?.(false);
    this.dispatch(runId);
    return result;
  }

  /** docs/control.md: at the run's next step boundary; at once when it does not execute now. */
  async pause(runId: string, by: string): Promise<void> {
    this.ensureStarted();
    const row = this.requireRow(runId);
    if (isTerminal(row.status)) throw new RunStateError(`run ${runId} already finished (${row.status}); nothing to pause`);
    if (row.status === 'blocked') throw new RunStateError(`run ${runId} is blocked (it waits for an approval and runs nothing): nothing to pause`);
    if (row.cancel_requested === 1) throw new RunStateError(`run ${runId} is being cancelled; it cannot be paused`);
    const asked = await this.queue.enqueue(() => {
      const act = this.active.get(runId);
      if (act) {
        act.pause ??= by;
        this.store.control.requestPause(runId, by, this.now());
        return act;
      }
      this.dropReady(runId);
      this.fresh.delete(runId);
      this.store.control.pause(runId, by, this.now());
      return undefined;
    });
    // Durable now: a Deno child with no request in flight learns of it at once (not from the
    // reply to its next step call, after that step ran). The same execution only: a later
    // one reads the pause from the row.
    if (asked && asked === this.active.get(runId) && asked.pause !== undefined) asked.pauseListener?.(true);
  }

  /** docs/control.md "Pause a workflow": runs created from now on are born held (insertRun). */
  async pauseWorkflow(workflow: string, by: string): Promise<WorkflowPause> {
    this.ensureStarted();
    return this.queue.enqueue(() => {
      this.store.pauses.pause(workflow, by, this.now());
      return this.store.pauses.list().find((p) => p.workflow === workflow)!;
    });
  }

  /** Unpaused in one write with what happens to its held runs: made pending (dispatched in
   *  creation order), or ended skipped with nothing of their code run. */
  async resumeWorkflow(workflow: string, held: HeldPolicy): Promise<string[]> {
    this.ensureStarted();
    const output = skipped(heldSkipReason(workflow)) as unknown as Json;
    const ids = await this.queue.enqueue(() => {
      const list = this.store.pauses.unpause(workflow);
      if (!list) throw new RunStateError(`workflow '${workflow}' is not paused; nothing to resume`);
      const now = this.now();
      for (const id of list) {
        if (held === 'run') {
          this.store.control.unpause(id, now);
          continue;
        }
        this.store.finishRun(id, 'succeeded', now, output);
        this.childEnded(id, 'succeeded', now, output);
      }
      return list;
    });
    for (const id of ids) {
      if (held === 'run') this.dispatch(id);
      else this.notifyTerminal(id);
    }
    return ids;
  }

  async workflowPauses(): Promise<WorkflowPause[]> {
    this.ensureStarted();
    return this.store.pauses.list();
  }

  async queueSummaries(now: number): Promise<QueueSummary[]> {
    this.ensureStarted();
    return this.reader.queueSummaries(now);
  }

  async gc(options: GcOptions): Promise<GcReport> {
    this.ensureStarted();
    return this.retention.gc(this.now(), options);
  }

  // ---- workflow files: approvals ------------------------------------------------------

  async approvals(workflow: string): Promise<ApprovalRecord[]> {
    this.ensureStarted();
    return this.files.approvals(workflow);
  }

  async approveFile(approval: ApprovalRecord): Promise<string[]> {
    this.ensureStarted();
    // One transaction: the approval and the release of every blocked run it allows.
    const released = await this.queue.enqueue(() => {
      this.files.approve(approval);
      const wf = this.o.registry.find(approval.workflow);
      if (!wf) return [];
      const approvals = this.files.approvals(approval.workflow);
      const now = this.now();
      const ids: string[] = [];
      for (const id of this.files.blockedRunIds(approval.workflow)) {
        const row = this.store.getRunRow(id);
        if (!row || this.o.fileGate?.blockReason(wf, row.version, approvals) !== undefined) continue;
        this.files.release(id, now);
        ids.push(id);
      }
      return ids;
    });
    for (const id of released) this.dispatch(id);
    return released;
  }

  /** Inside a transaction: why a run of this file version may not execute, if it may not. */
  private blockReason(wf: RegisteredWorkflow, version: string): BlockReason | undefined {
    if (!wf.file || !this.o.fileGate) return undefined;
    return this.o.fileGate.blockReason(wf, version, this.files.approvals(wf.definition.name));
  }

  private saveOutput(runId: string, session: Session): void {
    const out = session.output;
    if (out) void this.queue.enqueue(() => this.files.saveOutput(runId, out, this.now())).catch(() => {});
  }

  async waitForTerminal(runId: string, timeoutMs: number): Promise<RunView> {
    this.ensureStarted();
    // A run this engine executes, or is about to, exists and has not finished (its end is
    // notified before it leaves `active`): no read of its row. A result() per run read it.
    if (!this.active.has(runId) && !this.fresh.has(runId)) {
      const row = this.requireRow(runId);
      if (isTerminal(row.status)) return this.store.view(row, true);
    }
    return new Promise<RunView>((resolve, reject) => {
      let waiters = this.terminalWaiters.get(runId);
      if (!waiters) this.terminalWaiters.set(runId, (waiters = []));
      const done = (v: RunView | Error) => {
        cancelTimer();
        if (v instanceof Error) reject(v);
        else resolve(v);
      };
      const cancelTimer = setLongTimeout(() => {
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        // The last waiter gave up: nothing is kept for a run that may never finish.
        if (waiters.length === 0 && this.terminalWaiters.get(runId) === waiters) this.terminalWaiters.delete(runId);
        reject(new TimeoutError(`run ${runId} did not finish within ${timeoutMs}ms (status ${this.store.getRunRow(runId)?.status})`));
      }, timeoutMs);
      waiters.push(done);
    });
  }

  async idle(): Promise<void> {
    for (;;) {
      if (this.busy()) await new Promise<void>((r) => this.idleWaiters.push(r));
      // One more turn: a timer due "now" or a queued commit may start new work.
      await new Promise((r) => setImmediate(r));
      if (!this.busy()) return;
    }
  }

  // ---- dispatching -------------------------------------------------------------------

  private requireRow(runId: string) {
    const row = this.store.getRunRow(runId);
    if (!row) throw new UnknownRunError(runId);
    return row;
  }

  private busy(): boolean {
    // Runs ready to execute wait for an engine slot only while every one is taken.
    return !this.stopping && (this.running > this.slotBound() || (this.ready.length > 0 && this.running < this.o.maxConcurrentRuns) || this.queue.size > 0 || this.fanIn.pending > 0 || this.o.scheduler.catchingUp
      || this.o.scheduler.retrying);
  }

  /** Executions whose session only waits for queue slots: they move when a body elsewhere
   *  ends (that one counts as busy) or a rate window opens on the clock (a timer advance()
   *  fires), so idle() does not wait for them (a test's idle() hung on a rate window). */
  private slotBound(): number {
    if (!this.queues?.hasStepWaiters) return 0;
    let n = 0;
    for (const act of this.active.values()) if (act.session?.slotBound) n++;
    return n;
  }

  private resolveIdle(): void {
    if (this.busy()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private dispatch(runId: string): void {
    if (this.stopping) return;
    const act = this.active.get(runId);
    if (act) {
      act.again = true;
      return;
    }
    if (this.readySet.has(runId)) {
      // Already in line for an engine slot: a cancel asked since does not wait for one.
      if (this.cancelling.has(runId)) this.pump();
      return;
    }
    this.readySet.set(runId, true);
    this.ready.push(runId);
    this.pump();
  }

  private dropReady(runId: string): void {
    if (!this.readySet.delete(runId)) return;
    const i = this.ready.indexOf(runId);
    if (i >= 0) this.ready.splice(i, 1);
  }

  private pump(): void {
    if (this.stopping) return;
    while (this.running < this.o.maxConcurrentRuns && this.ready.length > 0 && !this.stopping) {
      const runId = this.ready.shift()!;
      this.readySet.delete(runId);
      this.launch(runId);
    }
    // A cancel to deliver does not wait for an engine slot (see `cancelling`).
    if (this.cancelling.size > 0) {
      for (const runId of this.cancelling) if (this.readySet.has(runId) && !this.stopping) this.dropReady(runId), this.launch(runId);
    }
  }

  private launch(runId: string): void {
    this.running++;
    void this.execute(runId)
      .catch((err) => this.reportCrash(runId, err))
      .finally(() => {
        this.running--;
        this.pump();
        if (!this.stopping) this.o.scheduler.claimMoreIfDrained();
        this.resolveIdle();
      });
  }

  private reportCrash(runId: string, err: unknown): void {
    if (this.stopping) return;
    // A storage failure mid-run (disk full, a lock held too long): the run stays as the file
    // says and is replayed from there after a backoff (and on restart); it never fails for it.
    // A cancel waits for no backoff (issue 36: up to 30 s per try, forever): the next try,
    // at once, ends the run.
    if (this.cancelUndelivered.has(runId)) this.setbacks.delete(runId);
    const n = (this.setbacks.get(runId) ?? 0) + 1;
    this.setbacks.set(runId, n);
    if (n === 1 || n % 10 === 0) console.error(`tranquil: run ${runId} could not be advanced (${n}x, will retry): ${(err as Error)?.message ?? err}`);
    setTimeout(() => this.dispatch(runId), Math.min(30_000, 50 * 2 ** n)).unref();
  }

  private async execute(runId: string): Promise<void> {
    const act: ActiveRun = { cancel: 'none', again: false };
    this.active.set(runId, act);
    let file = false;
    /** The last session's child connected (undefined: not a file's, or none started). */
    let connected: boolean | undefined;
    try {
      do {
        act.again = false;
        act.heldWake = false;
        connected = undefined;
        if (this.stopping) return;
        const fresh = this.fresh.get(runId);
        let workflow: string;
        let input: Json;
        let entries: JournalEntry[] | undefined;
        let status: string;
        let version: string | undefined;
        let traceparent: string | undefined;
        let deadline: number | undefined;
        // A run created by startRun: its view at the end needs no read of its row.
        let created: CreatedRun | undefined;
        if (fresh) {
          // Just created by startRun and not touched since: pending, empty journal.
          this.fresh.delete(runId);
          ({ workflow, input, traceparent } = fresh);
          created = fresh;
          deadline = fresh.deadlineAt;
          entries = [];
          status = 'pending';
        } else {
          const row = this.store.getRunRow(runId);
          if (!row || isTerminal(row.status) || row.status === 'blocked') return;
          if (act.cancel === 'none' && row.cancel_requested === 1) act.cancel = 'requested';
          if ((this.cancelUndelivered.get(runId) ?? 0) >= CANCEL_TRIES) act.cancel = 'forced';
          // Paused: runs only to deliver a cancel; a pause asked before a crash still holds.
          if (row.status === 'paused' && act.cancel === 'none') return;
          if (row.pause_by != null && act.cancel === 'none') act.pause = row.pause_by;
          workflow = row.workflow;
          input = this.store.plain<Json>(row.input);
          status = row.status;
          version = row.version;
          traceparent = row.trace_parent ?? undefined;
          deadline = row.deadline_at ?? undefined;
        }
        if (act.cancel === 'forced') {
          await this.queue.enqueue(() => {
            const now = this.now();
            this.store.finishRun(runId, 'cancelled', now);
            this.childEnded(runId, 'cancelled', now);
          });
          this.cancelUndelivered.delete(runId);
          this.setbacks.delete(runId);
          this.notifyTerminal(runId);
          return;
        }
        const wf = this.o.registry.find(workflow);
        file = wf?.file !== undefined;
        if (!wf) {
          await this.queue.enqueue(() => this.store.setStatus(runId, 'blocked', undefined, this.now()));
          return;
        }
        // Nothing of a file runs before its declaration is approved (checked at every
        // execution: a run created before a change, resumed after it, is held too).
        const reason = this.blockReason(wf, version ?? wf.version);
        if (reason) {
          await this.queue.enqueue(() => this.files.block(runId, reason, this.now()));
          return;
        }
        // Run-level flow control: a run over its queue's limit waits, pending, in line.
        if (wf.definition.runs && !(await this.admitRun(runId, act, wf.definition, input, status !== 'pending'))) {
          // Its slot granted meanwhile (a place recovered at start is granted at once, and the
          // grant's dispatch found this execution still active): run now, or it waited for good.
          if (act.again) continue;
          return;
        }
        if (status !== 'running') void this.queue.enqueue(() => this.store.setStatus(runId, 'running', undefined, this.now())).catch(() => {});
        const log = new SqliteRunLog(this.logHost, runId, workflow, input, entries ?? this.store.journal(runId), act);
        log.deadline = deadline;
        log.sleepsWokenAt = this.sleepsWoken.get(runId);
        this.sleepsWoken.delete(runId);
        const session = sessionFor(log, wf, version ?? wf.version, { stepDefaults: wf.definition.stepDefaults, maxPayloadBytes: this.o.maxPayloadBytes, cancelGraceMs: this.o.cancelGraceMs, telemetry: this.o.telemetry, traceparent, runLog: this.o.runLog, checkEmit: this.checkEmit, events: this.o.stepEvents }, this.o.fileSessions);
        const lost = new Promise<never>((_, reject) => (act.lose = reject));
        act.session = session;
        let outcome: RunOutcome;
        const t0 = performance.now();
        try {
          // Read once the session settled (a storage failure through `lost` does not wait for it).
          outcome = await Promise.race([session.run().finally(() => (connected = session.connected)), lost]);
        } finally {
          this.saveOutput(runId, session);
        }
        if (this.stopping) return;
        // This log never rejects (a failed write gives the session up through `lost`).
        if (outcome.type === 'interrupted') throw outcome.cause;
        const f = this.o.faults?.hit('before-outcome-commit');
        if (f) await f;
        // Read in the write's own turn: a cancel accepted up to then and not yet delivered.
        let pausedNow = false;
        const at = await this.queue.enqueue(() => {
          const t = this.applyOutcome(runId, outcome, act.cancel === 'forced' || (act.cancel === 'requested' && !session.cancelDelivered));
          // A pause asked meanwhile takes effect now (the session stopped at a step boundary).
          pausedNow = outcome.type === 'suspended' && act.pause !== undefined && act.cancel === 'none';
          if (pausedNow) this.store.control.pause(runId, act.pause!, t);
          return t;
        });
        // Decided in the write's turn: a pause asked after it (a request on the row, the run
        // still active) must not skip arming the wake below, or the run slept for good.
        if (pausedNow) return;
        if (this.setbacks.size > 0) this.setbacks.delete(runId);
        if (outcome.type === 'suspended') {
          this.fanIn.executed(runId, performance.now() - t0);
          if (outcome.wakeAt !== undefined) this.armAt(outcome.wakeAt);
          // A provider registered after the step looked and before the park was committed.
          if (outcome.status === 'parked' && this.providerNow(outcome.entries)) act.again = true;
          // A signal that arrived mid-execution is picked up now; a cancel, at once.
          // A cancel that came after the session decided to suspend is delivered now.
          const cancel = act.cancel as ActiveRun['cancel']; // set by cancel() meanwhile
          if (cancel === 'forced' || (cancel === 'requested' && !session.cancelDelivered)) act.again = true;
          // Children that ended meanwhile: at once, or after the fan-in hold.
          if (act.heldWake && !act.again && !this.fanIn.hold(runId)) act.again = true;
        } else {
          this.fanIn.forget(runId);
          const o = outcome;
          const c = created;
          const known = !c ? undefined
            : o.type === 'succeeded' ? () => this.store.finishedView(runId, c, 'succeeded', at, o.output)
            : o.type === 'failed' ? () => this.store.finishedView(runId, c, 'failed', at, undefined, o.error)
            : undefined;
          this.notifyTerminal(runId, act.written, known);
          return;
        }
      } while (act.again);
    } catch (err) {
      // A file's child that ends before its outcome at every start (killed, or looking killed)
      // never lets a cancel reach the code: after CANCEL_TRIES such tries, the cancel ends the
      // run; after one if the child never connected (no code ran to clean up). The Restate run
      // handler keeps the same rule (issue 36; docs/semantics.md, Cancel).
      if (file && act.cancel !== 'none' && !this.stopping) this.cancelUndelivered.set(runId, (this.cancelUndelivered.get(runId) ?? 0) + (connected === false ? CANCEL_TRIES : 1));
      throw err;
    } finally {
      this.active.delete(runId);
      // `act` lived as long as the run, so it is usually in the old generation by now, and a
      // dead old object still counts as a root for the next scavenges: cut its edges to the
      // young objects it holds (the written journal, the race with `lost`, the session via
      // its abort listener). This halved what each scavenge copied at 100 concurrent runs.
      act.written = act.lose = act.abort = act.session = undefined;
    }
  }

  /** Whether the run may execute now (its queue slot, src/runtime/run-gate.ts). A run that
   *  waits is not executed: it stays pending and is dispatched again once granted. A cancel
   *  of a run still in line ends it at once (nothing of it ran); a key function that fails
   *  fails the run with its one-line error. */
  private async admitRun(runId: string, act: ActiveRun, def: RegisteredWorkflow['definition'], input: Json, resumed: boolean): Promise<boolean> {
    // runs.singleton and runs.rateLimit first (run-flow.ts): a run they skip ends at once.
    const flow = await this.runFlow.admit(runId, def, input, resumed);
    if (flow.type === 'skipped' && act.cancel === 'none') {
      const output = skipped(flow.reason) as unknown as Json;
      await this.queue.enqueue(() => {
        const now = this.now();
        this.store.finishRun(runId, 'succeeded', now, output);
        this.childEnded(runId, 'succeeded', now, output);
      });
      this.notifyTerminal(runId);
      return false;
    }
    const adm: ReturnType<RunGate['admit']> = flow.type === 'go' ? this.runGate.admit(runId, def, input) : flow.type === 'skipped' ? { type: 'wait' } : flow;
    if (adm.type === 'go') return true;
    if (adm.type === 'wait' && act.cancel === 'none') return false;
    const error = adm.type === 'refused' ? toErrorInfo(adm.error) : undefined;
    await this.queue.enqueue(() => {
      const now = this.now();
      this.store.finishRun(runId, error ? 'failed' : 'cancelled', now, undefined, error);
      this.childEnded(runId, error ? 'failed' : 'cancelled', now, undefined, error);
    });
    this.notifyTerminal(runId);
    return false;
  }

  /** Resumes the runs parked on `capability` that a provider with `attrs` may serve. */
  async wakeParked(capability: string, attrs: Attrs): Promise<void> {
    if (!this.started || this.stopping) return;
    for (const id of this.parked.waitingOn(capability, (affinity) => contains(attrs, affinity))) this.dispatch(id);
  }

  private providerNow(entries: readonly JournalEntry[]): boolean {
    const caps = this.o.capabilities;
    return !!caps && entries.some((e) => {
      const park = e.status === 'parked' ? parkOf(e.error) : undefined;
      return park !== undefined && caps.eligible(park.capability, park.affinity);
    });
  }

  /** Inside a transaction: records the session's outcome; the time it wrote. */
  private applyOutcome(runId: string, o: RunOutcome, cancelPending = false): number {
    const now = this.now();
    switch (o.type) {
      case 'succeeded':
        this.store.finishRun(runId, 'succeeded', now, o.output);
        this.childEnded(runId, 'succeeded', now, o.output);
        break;
      case 'failed':
        this.store.finishRun(runId, 'failed', now, undefined, o.error);
        this.childEnded(runId, 'failed', now, undefined, o.error);
        break;
      case 'cancelled':
        this.store.finishRun(runId, 'cancelled', now);
        this.childEnded(runId, 'cancelled', now);
        break;
      case 'interrupted':
        break;
      case 'suspended':
        for (const entry of o.entries) this.store.recordStep(runId, entry);
        // A suspension with an accepted cancel not yet delivered is due at once, like the
        // cancel of a suspended run (store.ts requestCancel): if this engine stops or dies
        // before its next execution delivers it, start-up's timer scan resumes the run.
        this.store.setStatus(runId, o.status, cancelPending ? now : o.wakeAt, now);
        break;
    }
    return now;
  }



  /** Hands the run's final view to its result() waiters. `known`: the view without its steps,
   *  built from what this engine wrote (a run it created and just finished), instead of a
   *  read of the row (a result() per run read it: ~10 us, a sixth of the run's SQL time). */
  /** Inside the transaction that ended a run: its parent's end signal (run-links.ts); the
   *  parent is woken once that committed (notifyTerminal, after every end's commit). */
  private childEnded(runId: string, status: 'succeeded' | 'failed' | 'cancelled', now: number, output?: Json, error?: ErrorInfo): void {
    const parent = this.store.links.ended(runId, status, now, (id, name, payload, t) => this.store.insertSignal(id, name, payload, t), output, error);
    if (parent !== undefined) this.parentsToWake.push(parent);
  }

  private wakeParents(): void {
    if (this.parentsToWake.length === 0) return;
    for (const id of this.parentsToWake.splice(0)) {
      const act = this.active.get(id);
      if (act) {
        if (this.fanIn.wanted(id)) act.heldWake = true;
        else act.again = true;
      } else if (!this.readySet.has(id) && this.store.getRunRow(id)?.status === 'waiting' && !this.fanIn.hold(id)) this.dispatch(id);
    }
  }

  private notifyTerminal(runId: string, written?: WrittenEntry[], known?: () => RunView): void {
    this.runGate.ended(runId);
    this.runFlow.ended(runId);
    this.cancelling.delete(runId);
    this.wakeParents();
    const waiters = this.terminalWaiters.get(runId);
    if (!waiters || waiters.length === 0) return;
    this.terminalWaiters.delete(runId);
    let view: RunView;
    if (written && known) view = known();
    else {
      const row = this.store.getRunRow(runId);
      if (!row) return;
      view = this.store.view(row, !written);
    }
    if (written) {
      // Indexed by seq; a step called but never recorded leaves a hole.
      const steps: StepView[] = [];
      for (const w of written) if (w !== undefined) steps.push(fromWritten(w));
      view.steps = steps;
    }
    for (const w of waiters) w(view);
    // A dictionary's replaced table may still point at this array until a full GC: emptied,
    // it keeps no result promise (and its view) alive.
    waiters.length = 0;
  }

  // ---- the timer source ------------------------------------------------------------

  /** A run suspended until `at`: the scheduler arms its one timer there if that is earlier. */
  private armAt(at: number): void {
    this.o.scheduler.armAt(at);
  }

  /** Claims up to `batch` due runs (status -> running, wake_at cleared) and fires every due
   *  schedule slot in ONE write of the group commit (its fsync off the event loop), dispatches
   *  them once that is durable, and reports the next wake time or schedule slot in the file,
   *  whichever is first. */
  private async claimDue(now: number, batch: number): Promise<TimerClaim> {
    if (this.stopping) return { more: false };
    const writes = this.o.triggerStore.writes;
    const drain = this.o.drain;
    const { claimed, fired } = await this.queue.enqueue(() => {
      // Restate's outbox rows never sleep: every due run of a drain's file is a drained one.
      const due = this.store.dueRuns(now, batch).filter((d) => !drain || drain.runIds.has(d.runId));
      const ids = due.map((d) => d.runId);
      const meters = this.o.telemetry?.meters;
      if (meters) for (const d of due) meters.timerFired(now - d.wakeAt);
      for (const id of ids) {
        this.store.setStatus(id, 'running', undefined, now);
        // A run executing right now (a signal woke it) records its due sleeps itself, in its
        // own completion order; it runs again after this execution.
        const act = this.active.get(id);
        if (act) {
          act.again = true;
          continue;
        }
        // A sleep that is due is over: record it here, so the woken run replays past it
        // without a write of its own (the same write replay would make, one transaction earlier).
        this.store.wakeSleep(id, now);
        this.sleepsWoken.set(id, now);
      }
      return { claimed: ids, fired: drain ? [] : this.slots.fireDue(writes, now, this.bursts) };
    });
    if (this.o.faults?.hit('after-timer-write')) return { more: false };
    for (const r of fired) this.dispatch(r.runId);
    for (const id of claimed) this.dispatch(id);
    // A dispatched run can crash the engine (a fault point) before this returns.
    if (this.stopping) return { more: false };
    if (claimed.length === batch) return { more: true };
    const wake = this.store.nextWakeAt();
    const slot = drain ? undefined : writes.nextScheduleAt();
    return { more: false, nextAt: wake === undefined ? slot : slot === undefined ? wake : Math.min(wake, slot) };
  }
}

/** A written entry's view, parsed in place rather than copied: the written journal is read
 *  once, by the run's end (notifyTerminal), and dropped after it. */
function fromWritten(w: WrittenEntry): StepView {
  const e = w as WrittenEntry & JournalEntry;
  if (w.resultText !== undefined) e.result = JSON.parse(w.resultText) as Json;
  if (w.errorText !== undefined) e.error = JSON.parse(w.errorText) as ErrorInfo;
  return toStepView(e);
}
