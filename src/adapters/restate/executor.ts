// DurableExecutor on Restate. Runs execute as Restate workflow invocations (workflow id =
// run id) served by this process's SDK endpoint; the server is the embedded restate-server
// (started and stopped by PID) unless URLs are configured.
//
// The TriggerStore it is given (compose: the data dir's SQLite file) keeps what Restate does
// not: the run outbox (a run is written first, then forwarded to Restate, and re-forwarded
// at start if a crash came between; Restate dedups by workflow id), the event inbox,
// schedules, webhook secrets, and runs whose code diverged from their journal. Schedule
// slots are claimed through the Scheduler it is given. With `triggers: 'restate'` the event
// inbox, schedules and webhook secrets live in Restate instead (cluster-triggers.ts).
import { withControl } from './run-control.ts';
import './polyfill.ts';
import { createHash, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BackendUnavailableError, EngineStateError, NotSupportedError, RunStateError, TimeoutError, UnknownRunError, ValidationError, type ErrorInfo } from '../../domain/errors.ts';
import { MAX_CHILD_DEPTH, childDepth } from '../../domain/child-runs.ts';
import type { Json } from '../../domain/json.ts';
import { retryPlan, unknownRetryPoint, type RetryOptions, type RetryResult } from '../../domain/retry-point.ts';
import { deadlineFor, resumePlan, type ResumeResult } from '../../domain/run-control.ts';
import { heldSkipReason, type HeldPolicy, type WorkflowPause } from '../../domain/workflow-pause.ts';
import type { QueueSummary } from '../../domain/queue-summary.ts';
import { buildWorkflowPauseObject, WORKFLOW_PAUSE_OBJECT, type WorkflowPaused } from './workflow-pause-object.ts';
import { isTerminal } from '../../domain/run-status.ts';
import type { RunFilter, RunPage, RunView } from '../../domain/run-view.ts';
import type { CalendarFactory } from '../../ports/calendar.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Logger } from '../../ports/logger.ts';
import type { RunTelemetry } from '../../ports/telemetry.ts';
import type { StepEventSink } from '../../runtime/step-events.ts';
import type { RunLogOutput } from '../../ports/run-log.ts';
import type { ChildStartRequest, DurableExecutor, EmitRequest, EmitResult, StartRunRequest } from '../../ports/executor.ts';
import type { Scheduler, TimerClaim } from '../../ports/scheduler.ts';
import type { OutboxRun, TriggerStore } from '../../ports/trigger-store.ts';
import type { TriggerState } from '../../ports/triggers.ts';
import { publishEvent } from '../../runtime/event-publisher.ts';
import { setLongInterval, setLongTimeout } from '../../runtime/long-timer.ts';
import { levelLogger } from '../../runtime/logger.ts';
import type { WorkflowRegistry } from '../../runtime/registry.ts';
import { SlotFiring } from '../../runtime/slot-firing.ts';
import { emitCheckOf } from '../../runtime/boundary-schemas.ts';
import { registerTriggers, triggerState } from '../../runtime/trigger-state.ts';
import { identityCodec, sealJson, type PayloadCodec } from '../../domain/payload-codec.ts';
import { AdminApi, sqlString } from './admin-api.ts';
import { buildClusterTriggers, ClusterTriggerClient } from './cluster-triggers.ts';
import { endpointBase, registerDeployments, retryWhileUnknown, sweepDeployments, type DeploymentPlan } from './deployments.ts';
import { cutoffOf, DEFAULT_GC_BATCH, DEFAULT_RETENTION_MS, type GcOptions, type GcReport, type RetentionSettings } from '../../domain/retention.ts';
import { SdkEndpoint } from './endpoint.ts';
import { httpJson } from './http-json.ts';
import { divergenceOf } from './outbox-view.ts';
import { buildDivergenceObject, DIVERGENCE_OBJECT } from './divergence-object.ts';
import { buildOutputObject, OUTPUT_OBJECT } from './output-object.ts';
import { buildEventLogObject } from './event-log-object.ts';
import { EventLogReader, EventLogWriter } from './event-log.ts';
import type { ChildOutput } from '../../domain/run-view.ts';
import { RestateFileRuns, type FileRunsOptions } from './file-runs.ts';
import type { ApprovalRecord } from '../../domain/approval.ts';
import type { RunHooks } from './run-handler.ts';
import { RestateRunReader } from './run-reader.ts';
import type { InvocationRow } from './run-views.ts';
import { RunWatch } from './run-watch.ts';
import { ParkedAwakeables } from './parked-awakeables.ts';
import { CapabilityUnavailableError, type Attrs } from '../../domain/capability.ts';
import type { CapabilityRegistry } from '../../runtime/capabilities.ts';
import { RestateServer } from './server-process.ts';
import { ENGINE_ID_SETTING, refuseSqliteRunsInFlight } from './switch-guard.ts';
import { listChildren, parentRef, withLinks, type LinkReads } from './child-links.ts';
import { buildClusterLinks, ClusterLinks } from './cluster-links.ts';
import { buildSignalQueue, signalQueueKey, signalQueueName, type DeliverRequest } from './signal-queue.ts';
import { buildService, serviceName } from './workflow-service.ts';
import { buildQueueObject } from './queue-object.ts';
import { buildDebounceObject, RestateDebouncer } from './debounce-object.ts';
import { QueueCatalog, refuseBadRunKey } from './queue-slot.ts';
import { endedRuns } from './queue-views.ts';
import { queueSpecsOf } from '../../runtime/queues.ts';

export interface RestateExecutorOptions {
  dataDir: string;
  /** Outbox, event inbox, schedules, webhook secrets, settings; opened by start(). */
  triggerStore: TriggerStore;
  /** Claims due schedule slots; this executor registers its slot source into it. */
  scheduler: Scheduler;
  clock: Clock;
  registry: WorkflowRegistry;
  /** An existing Restate (cluster or managed): both set = start no server. */
  ingressUrl?: string;
  adminUrl?: string;
  /** Request identity public keys of an external Restate (`publickeyv1_...`; a cluster's). */
  identityKeys?: string[];
  /** Where the SDK endpoint binds and the URL Restate calls (config `restate.endpoint`). */
  endpoint?: { host: string; port?: number; url?: string };
  /** 'restate': event inbox, schedules + slot ledger and webhook secrets live in Restate
   *  (cluster-triggers.ts), shared by every replica; 'local' (default): the trigger store. */
  triggers?: 'local' | 'restate';
  calendar: CalendarFactory;
  /** Largest JSON of a step result (config maxPayloadBytes); default DEFAULT_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes?: number;
  /** How long a cancelled run's cleanup may run (config cancelGrace). */
  cancelGraceMs?: number;
  /** The engine's logger; the Restate SDK's messages go through it too. Default: warn, stderr. */
  logger?: Logger;
  /** Spans and metrics of runs (docs/observability.md); absent: none. */
  telemetry?: RunTelemetry;
  /** The embedded restate-server's OTLP endpoint for its own spans (config restate.tracingEndpoint). */
  tracingEndpoint?: string;
  /** Where ctx.log and step bodies' lines go (config `log.runs`); absent: nowhere. */
  runLog?: RunLogOutput;
  /** Per-step events of the runs this process executes (runs.subscribe); absent: none. */
  stepEvents?: StepEventSink;
  /** Also log them in Restate for subscribers in other processes (config
   *  restate.liveAcrossReplicas); the log is read either way. */
  stepEventLog?: boolean;
  /** Workflow files: the Deno runner's sessions and the approval gate (compose loadRunner). */
  files?: FileRunsOptions;
  /** The host's capability providers (step.use): docs/host.md. */
  capabilities?: CapabilityRegistry;
  /** Payload codec: inputs, step values, errors and signals reach Restate sealed (docs/data.md). */
  codec?: PayloadCodec;
  /** Retention (config retention): Restate keeps finished runs this long; gc() removes the
   *  engine's own rows of runs Restate no longer holds or finished before the cutoff. */
  retention?: RetentionSettings;
  /** How often, while running, this app's earlier deployments that no live run is pinned to
   *  are removed (config restate.deploymentSweep; default 10 minutes). */
  deploymentSweepMs?: number;
}

/** Names what this endpoint serves besides one workflow per Tranquil workflow; part of the
 *  deployment tag. */
const SERVICE_SHAPE = 'signal-queues+cancel-note+pause,diverged,output,queues,wfpause,events';

const SETTLE_POLL_MS = [5, 5, 10, 10, 20, 50, 100, 200, 250];

export class RestateExecutor implements DurableExecutor {
  readonly backend = 'restate';

  private opened = false;
  private server: RestateServer | undefined;
  private endpoint!: SdkEndpoint;
  private admin!: AdminApi;
  private ingress!: string;
  private eventLog: EventLogWriter | undefined;
  private started = false;
  private stopping = false;
  /** Aborted by stop(): every result() waiter and its attach request end at once, and every
   *  live run's step bodies are told to stop (one listener per live run: no limit). */
  private readonly stopped = unlimited(new AbortController());
  /** What stop() ends besides: one callback per result() waiter. A Set, not listeners on
   *  `stopped.signal`: Node warns (MaxListenersExceeded) past 10 listeners on one signal. */
  private readonly onStop = new Set<() => void>();
  private readonly log: Logger;
  private readonly settledWaiters = new Map<string, Set<() => void>>();
  private readonly settledViews = new Map<string, RunView>();
  /** One batched SQL look for all waiting result() calls (see run-watch.ts). */
  private readonly watch = new RunWatch(() => this.admin, (runId) => this.wakeWaiters(runId));
  private readonly services: string[];
  private readonly slots: SlotFiring;
  private readonly reader: RestateRunReader;
  /** Event inbox, schedules and webhook secrets: the trigger store's. */
  readonly triggers: TriggerState;
  private readonly files: RestateFileRuns | undefined;
  /** Set when triggers live in Restate (options.triggers 'restate'). */
  private readonly shared: ClusterTriggerClient | undefined;
  /** Child links every replica sees (cluster-links.ts); undefined: the trigger store's only. */
  private readonly clusterLinks: ClusterLinks | undefined;
  /** Runs parked on capability steps, each on an awakeable. */
  private readonly parks: ParkedAwakeables;
  /** Run-level debounce: a virtual object per workflow and key (debounce-object.ts). */
  readonly debouncer = new RestateDebouncer(() => this.ingress, () => this.admin, (input) => sealJson(this.o.codec ?? identityCodec, input), () => this.o.triggerStore, () => this.o.clock.now());

  constructor(private readonly o: RestateExecutorOptions) {
    this.log = o.logger ?? levelLogger();
    this.files = o.files && new RestateFileRuns(o.files, o.registry, () => this.ingress, () => this.admin);
    this.services = [...o.registry.all().flatMap((w) => [serviceName(w.definition.name), signalQueueName(serviceName(w.definition.name))]), DIVERGENCE_OBJECT, WORKFLOW_PAUSE_OBJECT, ...(this.files ? [OUTPUT_OBJECT, ...this.files.serviceNames()] : [])];
    this.slots = new SlotFiring(o.registry, o.calendar);
    this.reader = new RestateRunReader({ admin: () => this.admin, workflows: o.registry.all().map((w) => w.definition.name), local: (runId) => o.triggerStore.outboxRun(runId), codec: o.codec,
      issued: (runId) => this.shared?.issuedRun(runId, o.registry.all().map((w) => w.definition.name), (wf) => o.registry.find(wf)?.version) ?? Promise.resolve(undefined) });
    this.triggers = triggerState(o.triggerStore, { ensureStarted: () => this.ensureStarted(), rescan: () => o.scheduler.rescan(), now: () => o.clock.now() });
    if (o.triggers === 'restate') {
      const shared = (this.shared = new ClusterTriggerClient(() => this.ingress, () => this.admin));
      this.clusterLinks = new ClusterLinks(() => this.ingress, () => this.admin);
      const started = <T>(f: () => Promise<T>) => (this.ensureStarted(), f());
      this.triggers = {
        ...this.triggers,
        listEvents: (f) => started(() => shared.listEvents(f)),
        listSchedules: () => started(() => shared.listSchedules()),
        listSlots: (f) => started(() => shared.listSlots(f)),
        webhookSecret: (wf) => started(() => shared.webhookSecret(wf)),
      };
    }
    this.parks = new ParkedAwakeables({
      admin: () => this.admin, ingress: () => this.ingress, services: o.registry.all().map((w) => serviceName(w.definition.name)),
      eligible: (c, a) => o.capabilities?.eligible(c, a) ?? false, onError: (m) => this.log.log('warn', m),
    });
  }

  /** Resolves the awakeables of the runs parked on `capability` that `attrs` may serve. */
  async wakeParked(capability: string, attrs: Attrs): Promise<void> {
    if (!this.started || this.stopping) return;
    await this.parks.wake(capability, attrs);
  }

  // ---- lifecycle ---------------------------------------------------------------------

  async start(): Promise<void> {
    if (this.started) return;
    await this.o.triggerStore.open();
    this.opened = true;
    try {
      await refuseSqliteRunsInFlight(this.o.triggerStore, this.o.dataDir);
      if (this.shared) refuseSharedDebounce(this.o.registry);
      await this.connect();
      if (this.shared) await this.settleAdmin(() => this.shared!.ensureSchedules(this.o.registry));
      else await this.o.triggerStore.write((w) => registerTriggers(w, this.o.registry, this.slots, this.o.clock.now()));
      this.started = true;
      await this.forwardPending();
      await this.flushBursts();
      if (!this.shared) this.o.scheduler.register({ claimDue: (now) => this.fireSchedules(now) });
      this.startSweeping();
      await this.o.scheduler.start();
    } catch (err) {
      await this.teardown();
      throw err;
    }
  }

  private async connect(): Promise<void> {
    if (this.o.ingressUrl && this.o.adminUrl) {
      this.ingress = this.o.ingressUrl.replace(/\/$/, '');
      this.admin = new AdminApi(this.o.adminUrl.replace(/\/$/, ''));
    } else if (this.o.ingressUrl || this.o.adminUrl) {
      throw new ValidationError('restate config: set both ingressUrl and adminUrl, or neither (to start an embedded restate-server)');
    } else {
      this.server = new RestateServer(this.o.dataDir, { tracingEndpoint: this.o.tracingEndpoint });
      this.server.onUnexpectedExit = () => void this.restartServer();
      await this.server.start();
      this.ingress = this.server.ingressUrl;
      this.admin = new AdminApi(this.server.adminUrl);
    }
    const hooks: RunHooks = {
      emit: (req) => this.emit(req),
      diverged: (runId, workflow, error) => this.recordDivergence(runId, workflow, error),
      settled: (runId, view) => this.wakeSettled(runId, view),
      stopSignal: this.stopped.signal,
      capability: (req, signal) => this.o.capabilities?.call(req, signal) ?? Promise.reject(new CapabilityUnavailableError(req.capability, req.affinity)),
      parked: (runId, state) => this.parks.parked(runId, state),
      codec: this.o.codec,
      childOutput: (runId, output) => void this.saveChildOutput(runId, output),
      startChild: (req) => this.startChild(req),
      sendSignal: (runId, name, payload) => this.signal(runId, name, payload),
      queues: new QueueCatalog(queueSpecsOf(this.o.registry.all().map((w) => w.definition))),
      cancelRun: (runId, by) => this.cancel(runId, by),
    };
    const identityKeys = this.server ? [this.server.identityKey] : (this.o.identityKeys ?? []);
    // ctx.emit payloads are checked against the events' declared schemas (docs/values.md).
    // Step events go to this process's hub and, when logged (stepEventLog), to the run's log
    // in Restate, which the hub follows for runs other replicas execute (event-log.ts).
    this.eventLog = this.o.stepEventLog ? new EventLogWriter(this.o.stepEvents, () => this.ingress, this.log) : undefined;
    const events = this.eventLog ?? this.o.stepEvents;
    this.o.stepEvents?.useRemote?.(new EventLogReader(() => this.ingress, this.eventLog?.origin ?? randomUUID(), this.log));
    const limits = { maxPayloadBytes: this.o.maxPayloadBytes, cancelGraceMs: this.o.cancelGraceMs, telemetry: this.o.telemetry, runLog: this.o.runLog, checkEmit: emitCheckOf(this.o.registry), events };
    const files = this.files?.handlerFiles();
    const services = [
      ...this.o.registry.all().flatMap((w) => [buildService(w, hooks, limits, { files, retentionMs: this.retention.maxAgeMs }), buildSignalQueue(serviceName(w.definition.name))]),
      ...(this.files?.services() ?? []),
    ];
    // Kept as long as the runs they describe (the retention is part of the deployment tag).
    services.push(buildDivergenceObject(this.retention.maxAgeMs) as (typeof services)[number]);
    services.push(buildQueueObject((runIds) => endedRuns(this.admin, runIds)) as (typeof services)[number]);
    services.push(buildDebounceObject(this.o.registry) as (typeof services)[number]);
    services.push(buildWorkflowPauseObject() as (typeof services)[number]);
    services.push(buildEventLogObject(this.retention.maxAgeMs) as (typeof services)[number]);
    if (this.files) services.push(buildOutputObject(this.retention.maxAgeMs) as (typeof services)[number]);
    if (this.shared) services.push(...(buildClusterTriggers(this.o.registry, this.o.calendar) as typeof services), buildClusterLinks() as (typeof services)[number]);
    this.endpoint = new SdkEndpoint(services, identityKeys, this.log);
    const portFile = join(this.server?.baseDir ?? this.o.dataDir, 'endpoint-port');
    const ep = this.o.endpoint;
    const host = ep?.host ?? '127.0.0.1';
    const port = ep?.port !== undefined ? await this.endpoint.listen(ep.port, host, false) : await this.endpoint.listen(existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0, host);
    writeFileSync(portFile, String(port), { mode: 0o600 });
    await this.settleAdmin(() => this.registerDeployments(port));
  }

  /** A server that just (re)started can answer one query and fail the next while its node
   *  finishes starting ("node was shut down or removed"): retry transport and admin errors
   *  for a bounded time instead of failing engine.start(). */
  private async settleAdmin(fn: () => Promise<void>, boundMs = 30_000): Promise<void> {
    const deadline = Date.now() + boundMs;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof BackendUnavailableError) || Date.now() + wait > deadline) throw err;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** One deployment per code version (tag), registered once whichever replica comes first;
   *  see deployments.ts. */
  /** What registerDeployments registered last: the deployment sweep keeps it. */
  private plan: DeploymentPlan | undefined;
  private stopSweepTimer: (() => void) | undefined;

  /** Deployment hygiene while running (deployments.ts); best effort, logged, tried again.
   *  Any accepted period (config restate.deploymentSweep): a setInterval past 24.8 days ran
   *  every millisecond. */
  private startSweeping(): void {
    const every = this.o.deploymentSweepMs ?? 600_000;
    this.stopSweepTimer = setLongInterval(() => {
      if (!this.plan || this.stopping) return;
      sweepDeployments(this.admin, this.plan).catch((err: Error) => this.log.log('warn', `removing idle deployments failed (tried again in ${every} ms): ${err.message}`));
    }, every, { unref: true });
  }

  private async registerDeployments(port: number): Promise<void> {
    // SERVICE_SHAPE: a change in the services the endpoint serves for the same workflows
    // (the signal queues) needs a deployment of its own: Restate would not see them otherwise.
    const versions = this.o.registry.all().map((w) => `${w.definition.name}@${w.version}`).sort().join(',');
    // The retention is a service option: a new value needs a deployment of its own too.
    const shape = `${this.files?.used ? `${SERVICE_SHAPE},approvals` : SERVICE_SHAPE}${this.shared ? '+shared-triggers+links' : ''}|r${this.retention.maxAgeMs}`;
    const tag = createHash('sha256').update(`${versions}|${shape}`).digest('hex').slice(0, 12);
    const url = this.o.endpoint?.url;
    this.plan = {
      base: url ?? endpointBase(this.o.endpoint?.host ?? '127.0.0.1', port), tag, engineId: await this.engineId(), shared: url !== undefined, services: this.services,
    };
    await registerDeployments(this.admin, this.plan);
  }

  /** restate-server died under us: start it again on the same store and ports (bounded),
   *  then let invocations that backed off meanwhile resume at once. */
  private restarts: number[] = [];
  /** A restart's server.start() in flight: stop() waits for it, or the server it spawns
   *  after stop() would be left running (with its temp dir). */
  private restarting: Promise<unknown> | undefined;
  private async restartServer(): Promise<void> {
    if (this.stopping || !this.server) return;
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60_000);
    if (this.restarts.length >= 5) {
      this.log.log('error', 'restate-server exited 5 times within a minute; not restarting it again');
      return;
    }
    this.restarts.push(now);
    this.log.log('warn', 'restate-server exited unexpectedly; restarting it');
    try {
      const started = this.server.start();
      this.restarting = started.catch(() => {});
      await started.finally(() => (this.restarting = undefined));
      if (this.stopping) return;
      await this.settleAdmin(() => this.registerDeployments(this.endpoint.port));
    } catch (err) {
      if (!this.stopping) this.log.log('error', `restarting restate-server failed: ${(err as Error).message}`);
    }
  }

  /** Identifies this data dir's deployments among others on a shared Restate. */
  private engineId(): Promise<string> {
    return this.o.triggerStore.write((w) => {
      const known = w.setting(ENGINE_ID_SETTING);
      if (known) return known;
      const id = randomUUID();
      w.setSetting(ENGINE_ID_SETTING, id);
      return id;
    });
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopping) return;
    this.stopping = true;
    await this.teardown();
  }

  private async teardown(): Promise<void> {
    this.stopped.abort();
    this.stopSweepTimer?.();
    for (const end of [...this.onStop]) end();
    this.o.scheduler.stop();
    this.watch.stop();
    // The events the last executions emitted reach the log before the server may stop.
    await this.eventLog?.drain();
    await this.endpoint?.close().catch(() => {});
    await this.restarting;
    await this.server?.stop().catch(() => {});
    if (this.opened) await this.o.triggerStore.close();
    this.opened = false;
    for (const waiters of this.settledWaiters.values()) for (const w of waiters) w();
  }

  private ensureStarted(): void {
    if (!this.started || this.stopping) throw new EngineStateError('engine is not started (call engine.start())');
  }

  /** The timer source: fires due schedule slots into the outbox (the slot's run id dedups,
   *  as on SQLite), forwards them, and tells the scheduler the next slot. */
  private async fireSchedules(now: number): Promise<TimerClaim> {
    if (!this.started || this.stopping) return { more: false };
    const { fired, nextAt } = await this.o.triggerStore.write((w) => ({ fired: this.slots.fireDue(w, now, this.debouncer), nextAt: w.nextScheduleAt() }));
    if (fired.length) await this.forward(fired).catch((err) => {
      this.log.log('warn', `forwarding scheduled runs to Restate failed (retried at next start): ${(err as Error).message}`);
    });
    await this.flushBursts();
    return { more: false, nextAt };
  }

  // ---- starting runs (outbox) --------------------------------------------------------

  async startRun(req: StartRunRequest): Promise<{ runId: string; created: boolean }> {
    this.ensureStarted();
    const wf = this.o.registry.get(req.workflow);
    refuseBadRunKey(wf.definition, req.input);
    const now = this.o.clock.now();
    const run: OutboxRun = {
      runId: req.runId, workflow: req.workflow, version: req.fork?.version ?? wf.version, input: req.input, traceparent: req.traceparent,
      deadlineAt: deadlineFor(now, wf.definition.timeoutMs, req.timeoutMs), rerunOf: req.rerunOf,
      ...(req.fork ? { fork: { from: req.fork.from, entries: req.fork.entries } } : {}),
    };
    const created = await this.o.triggerStore.write((w) => w.insertRun(run, now));
    if (created) await this.forward([run]);
    return { runId: req.runId, created };
  }

  /** A child run with its link (child-links.ts), in the outbox write, then forwarded. */
  async startChild(req: ChildStartRequest): Promise<{ runId: string; created: boolean }> {
    this.ensureStarted();
    const wf = this.o.registry.get(req.workflow);
    refuseBadRunKey(wf.definition, req.input);
    const store = this.o.triggerStore;
    // In a cluster the parent's chain may run through other replicas, whose links this
    // replica's file lacks: the cycle and depth limits are checked on every replica's links
    // before anything is written (the outbox write checks this file's again).
    const depth = this.clusterLinks ? await this.clusterDepth(req) : undefined;
    // Called from the parent's step body: the child's trace starts under that attempt's span.
    const trace = this.o.telemetry?.starting('start', req.workflow, req.runId);
    const run: OutboxRun = { runId: req.runId, workflow: req.workflow, version: wf.version, input: req.input, traceparent: trace?.traceparent, deadlineAt: deadlineFor(this.o.clock.now(), wf.definition.timeoutMs, req.timeoutMs) };
    const created = await store.write((w) => {
      if (!w.insertChildRun) throw new NotSupportedError('this engine\'s trigger store keeps no child links');
      return w.insertChildRun(run, req.parent, this.o.clock.now());
    });
    // Also when not created (a start retried after a crash): the link writes are idempotent.
    if (this.clusterLinks && depth !== undefined) await this.clusterLinks.link(run.runId, { ...req.parent, depth });
    if (created) await this.forward([run]);
    trace?.end(created);
    return { runId: req.runId, created };
  }

  /** The child's depth from the parent's chain through every replica's links (one read per
   *  ancestor: a top-level parent's child costs one), refusing a cycle or a depth too deep. */
  private async clusterDepth(req: ChildStartRequest): Promise<number> {
    const parentOf = async (id: string) => this.links.parentOf?.(id);
    const first = await parentOf(req.parent.runId);
    const chain = [req.parent.runId];
    for (let l = first; l && chain.length <= MAX_CHILD_DEPTH + 1; l = await parentOf(l.runId)) chain.push(l.runId);
    return childDepth(req.runId, chain, first?.depth ?? 0);
  }

  private async forward(runs: readonly OutboxRun[]): Promise<void> {
    await Promise.all(
      runs.map(async (r) => {
        const input = sealJson(this.o.codec ?? identityCodec, r.input);
        const parent = await parentRef(this.o.triggerStore, this.reader, r.runId);
        const body = {
          ...(this.files ? this.files.runRequest(r.workflow, input, r.version) : { input }),
          ...(parent ? { parent } : {}),
          ...(r.traceparent ? { traceparent: r.traceparent } : {}),
          ...(r.deadlineAt !== undefined ? { deadline: r.deadlineAt } : {}),
          // runs.fork: the original's version and its recorded steps before the fork point, as
          // data journaled with the run request (step values sealed as in the journal).
          ...(r.fork ? { version: r.version, fork: sealJson(this.o.codec ?? identityCodec, r.fork.entries as unknown as Json) } : {}),
          // 2: run control, and the workflow-pause check before its code (workflow-service.ts).
          control: 2,
          // 1: outcomes settled already are taken without a race (driver.ts).
          driver: 1,
        };
        // The run's trace context as W3C traceparent too: a Restate that exports traces
        // (tracing-endpoint) puts its invocation spans in the run's trace.
        const headers = r.traceparent ? { traceparent: r.traceparent } : undefined;
        const res = await retryWhileUnknown(() => httpJson('POST', `${this.ingress}/${serviceName(r.workflow)}/${encodeURIComponent(r.runId)}/run/send`, body, { headers }));
        if (!res.ok) throw new BackendUnavailableError(`restate ingress refused run ${r.runId} (${res.status}): ${res.text.slice(0, 200)}`);
      }),
    );
    await this.o.triggerStore.write((w) => w.markForwarded(runs.map((r) => r.runId), this.o.clock.now()));
  }

  /** Debounced triggers recorded but not pushed to their bursts (a crash, Restate away): a
   *  failure is logged and retried at the next flush (the next trigger or start). */
  private async flushBursts(): Promise<void> {
    // Nothing is ever recorded without a debounced workflow: no read per emit then.
    if (!this.o.registry.all().some((w) => w.definition.debounce)) return;
    await this.debouncer.flush().catch((err) => {
      this.log.log('warn', `pushing debounced triggers to Restate failed (retried at the next trigger or start): ${(err as Error).message}`);
    });
  }

  /** Runs written locally but not confirmed by Restate before a crash or stop. */
  private async forwardPending(): Promise<void> {
    const pending = await this.o.triggerStore.pendingRuns(10_000);
    if (pending.length) await this.forward(pending);
  }

  async emit(req: EmitRequest): Promise<EmitResult> {
    this.ensureStarted();
    if (this.shared) return this.shared.publish(req.id, { name: req.name, payload: req.payload });
    const result = await this.o.triggerStore.write((w) => publishEvent(w, this.o.registry, req, this.o.clock.now(), this.debouncer));
    if (result.created.length) await this.forward(result.created);
    // The event's debounced triggers, recorded in its write, join their bursts now.
    await this.flushBursts();
    return { runIds: result.runIds, duplicate: result.duplicate };
  }

  // ---- views -------------------------------------------------------------------------

  private invocation(runId: string, workflow?: string): Promise<{ inv: InvocationRow; workflow: string } | undefined> {
    return this.reader.invocation(runId, workflow);
  }

  // Reads go through the same RunReader the CLI uses on this backend: one code path.
  async getRun(runId: string): Promise<RunView | undefined> {
    this.ensureStarted();
    const v = await this.reader.getRun(runId);
    return v && withControl(this.o.triggerStore, await withLinks(this.links, this.reader, v, true), true);
  }

  async listRuns(filter: RunFilter): Promise<RunPage> {
    this.ensureStarted();
    if (filter.parent !== undefined) return listChildren(this.links, this.reader, filter);
    const page = await this.reader.listRuns(filter);
    for (const v of page.runs) await withControl(this.o.triggerStore, await withLinks(this.o.triggerStore, this.reader, v, false), false);
    return page;
  }

  // ---- operations --------------------------------------------------------------------

  /** Child links: this replica's (no query), then, in a cluster, every replica's. List rows
   *  read this replica's only (one query per row would be too many): their `parent` may be
   *  absent for a child another replica started; runs.get and runs.list({ parent }) see all. */
  private get links(): LinkReads {
    return this.clusterLinks ? this.clusterLinks.over(this.o.triggerStore) : this.o.triggerStore;
  }

  private async requireView(runId: string): Promise<RunView> {
    const v = await this.getRun(runId);
    if (!v) throw new UnknownRunError(runId);
    return v;
  }

  /** Through the run's signal queue (signal-queue.ts): one call whatever the number of
   *  signals sent before; the run's `signal` handler refuses a finished run (409). */
  async signal(runId: string, name: string, payload: Json): Promise<void> {
    this.ensureStarted();
    const notDelivered = (status: string) => new RunStateError(`run ${runId} already finished (${status}); signal '${name}' not delivered`);
    // The outbox knows every run this engine started: no admin query (which would read the
    // run's whole state, growing with its steps). Others are looked up as before.
    const local = await this.o.triggerStore.outboxRun(runId);
    if (local && divergenceOf(local)) throw notDelivered('failed');
    let workflow = local?.workflow;
    if (!workflow) {
      const v = await this.requireView(runId);
      if (isTerminal(v.status)) throw notDelivered(v.status);
      workflow = v.workflow;
    }
    const queue = signalQueueName(serviceName(workflow));
    const res = await retryWhileUnknown(() => httpJson('POST', `${this.ingress}/${queue}/${encodeURIComponent(signalQueueKey(runId, name))}/deliver`, { runId, name, payload: sealJson(this.o.codec ?? identityCodec, payload) } satisfies DeliverRequest));
    if (res.status === 409) throw notDelivered(/\((\w+)\)/.exec(res.text)?.[1] ?? 'finished');
    if (!res.ok) throw new BackendUnavailableError(`restate refused signal '${name}' for run ${runId} (${res.status}): ${res.text.slice(0, 200)}`);
  }

  async cancel(runId: string, by: string): Promise<void> {
    this.ensureStarted();
    const v = await this.requireView(runId);
    if (isTerminal(v.status)) throw new RunStateError(`run ${runId} already finished (${v.status}); nothing to cancel`);
    const found = await this.invocation(runId, v.workflow);
    if (!found) throw new RunStateError(`run ${runId} is not yet accepted by Restate; try again`);
    // Who asks, noted durably before the cancel is asked: the run reads it as it ends.
    const noted = await httpJson('POST', `${this.ingress}/${serviceName(v.workflow)}/${encodeURIComponent(runId)}/cancelNote`, { by });
    // 404: the run's service is served by code from before `cancelNote` (a replica not yet
    // upgraded): the cancel goes ahead, and `why` says who asked is not recorded.
    if (!noted.ok && noted.status !== 404) throw new BackendUnavailableError(`restate refused to note the cancel of run ${runId} (${noted.status}): ${noted.text.slice(0, 200)}`);
    const status = await this.admin.cancel(found.inv.id);
    if (status === 409) throw new RunStateError(`run ${runId} already finished; nothing to cancel`);
    if (status >= 300) throw new BackendUnavailableError(`restate refused to cancel run ${runId} (${status})`);
  }

  async retry(runId: string, options: RetryOptions): Promise<RetryResult> {
    this.ensureStarted();
    const v = await this.requireView(runId);
    if (v.status !== 'failed') throw new RunStateError(`run ${runId} is ${v.status}; only a failed run can be retried`);
    if (v.error?.name === 'NonDeterminismError' || divergenceOf(await this.o.triggerStore.outboxRun(runId))) throw new RunStateError(`run ${runId} failed with NonDeterminismError: its code no longer matches its journal; it cannot be resumed`);
    // The parked run's step views mirror its journal (nothing moves while it is parked):
    // the plan made here is the one the handler carries out, told the point by name.
    const plan = retryPlan(v.steps, options.from);
    if (!plan) throw unknownRetryPoint(runId, options.from!);
    const cycleBefore = await this.cycleOf(runId, v.workflow);
    const res = await httpJson('POST', `${this.ingress}/${serviceName(v.workflow)}/${encodeURIComponent(runId)}/retry`, plan.from ? { from: plan.from.name } : {});
    if (res.status === 409 || res.status === 500) throw new RunStateError(`run ${runId} cannot be retried now: ${res.text.slice(0, 200)}`);
    if (!res.ok) throw new BackendUnavailableError(`restate refused retry of run ${runId} (${res.status}): ${res.text.slice(0, 200)}`);
    // Return once the run has left this failure (running again, or failed anew in a later
    // cycle), so a result() right after sees the new attempt, not the old failure.
    const deadline = Date.now() + 30_000;
    for (let i = 0; (await this.requireView(runId)).status === 'failed' && (await this.cycleOf(runId, v.workflow)) === cycleBefore; i++) {
      if (Date.now() > deadline) throw new TimeoutError(`run ${runId} did not resume within 30s of its retry`);
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS[Math.min(i, SETTLE_POLL_MS.length - 1)]));
    }
    return plan;
  }

  /** docs/control.md: noted through the run's `pause` handler (pause-handlers.ts); the run
   *  holds at its next step boundary or wake. */
  async pause(runId: string, by: string): Promise<void> {
    this.ensureStarted();
    const v = await this.requireView(runId);
    if (isTerminal(v.status)) throw new RunStateError(`run ${runId} already finished (${v.status}); nothing to pause`);
    if (v.status === 'blocked') throw new RunStateError(`run ${runId} is blocked (it waits for an approval and runs nothing): nothing to pause`);
    await this.control(runId, v.workflow, 'pause', { by });
  }

  /** docs/control.md: a paused run goes on; a cancelled run parked by its handler continues
   *  from the step its cancel reached (run-continue.ts). Returns once it left that status (a
   *  runs.get right after shows it going on, as on SQLite). */
  async resume(runId: string): Promise<ResumeResult> {
    this.ensureStarted();
    const v = await this.requireView(runId);
    let result: ResumeResult = { resumed: 'paused', discarded: [] };
    if (v.status === 'cancelled') {
      const found = await this.invocation(runId, v.workflow);
      if (!found || found.inv.status === 'completed') {
        throw new RunStateError(`run ${runId} ended with its cancel (cancelled while blocked or parked failed, by code from before runs.resume, or its park expired): it cannot be continued; \`tranquil runs rerun ${runId}\` starts it anew`);
      }
      // The parked run's step views mirror its journal: the plan made here is the handler's.
      result = resumePlan(v.steps);
    }
    await this.control(runId, v.workflow, 'resume', {});
    if (v.status === 'paused' || v.status === 'cancelled') await this.leaves(runId, v.status);
    return result;
  }

  /** Returns once the run's view left `status` (a runs.get right after shows it going on). */
  private async leaves(runId: string, status: string): Promise<void> {
    this.settledViews.delete(runId);
    const deadline = Date.now() + 30_000;
    for (let i = 0; (await this.requireView(runId)).status === status; i++) {
      if (Date.now() > deadline) throw new TimeoutError(`run ${runId} did not go on within 30s of its resume`);
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS[Math.min(i, SETTLE_POLL_MS.length - 1)]));
    }
  }

  /** docs/control.md "Pause a workflow": kept in the workflow's object (cluster-wide); each
   *  new run asks it before its code runs (run-handler.ts workflowHold). */
  async pauseWorkflow(workflow: string, by: string): Promise<WorkflowPause> {
    this.ensureStarted();
    const p = await this.pauseObject<WorkflowPaused>(workflow, 'pause', { by });
    return { workflow, by: p.by, at: new Date(p.t).toISOString() };
  }

  /** Unpauses the workflow's object, then resumes (or skips) each run it held, oldest first,
   *  through the run's `resume` handler; each goes on before the next is resumed. A run that
   *  was resumed on its own meanwhile, or cancelled, is refused there and left out. */
  async resumeWorkflow(workflow: string, held: HeldPolicy): Promise<string[]> {
    this.ensureStarted();
    const r = await this.pauseObject<{ paused: WorkflowPaused | null; held: string[] }>(workflow, 'resume', {});
    if (!r.paused) throw new RunStateError(`workflow '${workflow}' is not paused; nothing to resume`);
    const done: string[] = [];
    for (const runId of r.held) {
      try {
        await this.control(runId, workflow, 'resume', held === 'skip' ? { held: true, skip: heldSkipReason(workflow) } : { held: true });
      } catch (err) {
        if (err instanceof RunStateError) continue;
        throw err;
      }
      done.push(runId);
      if (held === 'run') await this.leaves(runId, 'paused');
    }
    return done;
  }

  async workflowPauses(): Promise<WorkflowPause[]> {
    this.ensureStarted();
    return this.reader.workflowPauses();
  }

  async queueSummaries(now: number): Promise<QueueSummary[]> {
    this.ensureStarted();
    return this.reader.queueSummaries(now);
  }

  private async pauseObject<T>(workflow: string, handler: 'pause' | 'resume', body: Json): Promise<T> {
    const res = await retryWhileUnknown(() => httpJson('POST', `${this.ingress}/${WORKFLOW_PAUSE_OBJECT}/${encodeURIComponent(workflow)}/${handler}`, body));
    if (!res.ok) throw new BackendUnavailableError(`restate refused the ${handler} of workflow '${workflow}' (${res.status}): ${res.text.slice(0, 200)}`);
    return res.json as T;
  }

  /** Calls one of the run's control handlers; its refusal (409) is the caller's RunStateError. */
  private async control(runId: string, workflow: string, handler: 'pause' | 'resume', body: Json): Promise<void> {
    const res = await retryWhileUnknown(() => httpJson('POST', `${this.ingress}/${serviceName(workflow)}/${encodeURIComponent(runId)}/${handler}`, body));
    const message = (res.json as { message?: unknown } | undefined)?.message;
    const said = typeof message === 'string' ? message : res.text.slice(0, 200);
    if (res.status === 409 || res.status === 400) throw new RunStateError(said);
    if (res.status === 404) throw new NotSupportedError(`run ${runId} is served by code from before runs.${handler} on Restate: ${said}`);
    if (!res.ok) throw new BackendUnavailableError(`restate refused ${handler} of run ${runId} (${res.status}): ${said}`);
  }

  /** How many times the run has failed and been parked (`~cycle`, written by the handler). */
  private async cycleOf(runId: string, workflow: string): Promise<number> {
    const rows = await this.admin.query<{ value_utf8: string | null }>(
      `SELECT value_utf8 FROM state WHERE service_name = ${sqlString(serviceName(workflow))} AND service_key = ${sqlString(runId)} AND key = '~cycle'`,
    );
    return rows[0]?.value_utf8 ? Number(JSON.parse(rows[0].value_utf8)) : -1;
  }

  async waitForTerminal(runId: string, timeoutMs: number): Promise<RunView> {
    this.ensureStarted();
    const deadline = Date.now() + timeoutMs;
    const abort = new AbortController();
    const onStop = () => abort.abort();
    if (this.stopped.signal.aborted) abort.abort();
    this.onStop.add(onStop);
    // Settles (false) when this call ends or the engine stops: no waiter outlives either.
    const ended = new Promise<boolean>((r) => abort.signal.addEventListener('abort', () => r(false), { once: true }));
    const never = () => ended;
    let unwatch: (() => void) | undefined;
    try {
      let workflow = (await this.o.triggerStore.outboxRun(runId))?.workflow;
      let v: RunView | undefined;
      if (!workflow) {
        v = await this.requireView(runId);
        if (isTerminal(v.status)) return v;
        workflow = v.workflow;
      }
      // Restate's attach answers the moment the invocation completes (durably); the view
      // this process's handler wrote is then the committed one, so no query is needed.
      // While attach is pending this waiter reads the SQL view (costly for the server) only
      // when woken: by this process's handler settling the run, or by the shared RunWatch,
      // which checks every waiting run in one query per tick (runs executed elsewhere,
      // parked-failed runs, which never complete, and a lost attach). Never one query per
      // waiter per interval: with 1000 waiters those starved the server of CPU.
      let completed = this.attach(workflow, runId, abort.signal).then((ok) => ok || never());
      let attachPending = true;
      unwatch = this.watch.add(runId, serviceName(workflow));
      for (let i = 0; ; i++) {
        const left = deadline - Date.now();
        if (left <= 0) throw new TimeoutError(`run ${runId} did not finish within ${timeoutMs}ms (status ${v?.status ?? 'unknown'})`);
        const cachedBefore = this.settledViews.get(runId);
        // Parked failed or cancelled here: it does not complete, and the server shows its view
        // a moment after the handler wrote it: look again soon (a few queries, once per run).
        const parked = cachedBefore?.status === 'failed' || cachedBefore?.status === 'cancelled';
        const pollMs = Math.min(left, parked ? SETTLE_POLL_MS[Math.min(i, SETTLE_POLL_MS.length - 1)]! : attachPending ? left : 250);
        if (this.stopping) throw new EngineStateError('engine stopped while waiting for a result');
        let done = await Promise.race([completed, this.settledOrAfter(runId, pollMs, abort.signal).then(() => false)]);
        if (this.stopping) throw new EngineStateError('engine stopped while waiting for a result');
        const cached = this.settledViews.get(runId);
        if (cached && cached.status === 'succeeded') {
          // Settled here: the completion is a moment away; wait for it rather than query.
          if (!done) done = await Promise.race([completed, new Promise<boolean>((r) => setTimeout(() => r(false), Math.min(left, 2000)))]);
          if (done) return cached;
        }
        if (done) {
          completed = never();
          attachPending = false;
        }
        try {
          // A query may queue behind others (admin queries are capped): it must not hold
          // this call past its deadline. An abandoned one finishes in the background.
          const view = this.requireView(runId);
          view.catch(() => {});
          const got = await Promise.race([view, this.settledOrAfter(runId, Math.max(0, deadline - Date.now()), abort.signal).then(() => undefined)]);
          if (got) v = got;
        } catch (err) {
          // Transport errors and unanswered requests (the server restarting or overloaded):
          // keep waiting until the deadline.
          if (!(err instanceof BackendUnavailableError)) throw err;
        }
        if (v && isTerminal(v.status)) return v;
      }
    } finally {
      unwatch?.();
      this.onStop.delete(onStop);
      abort.abort();
    }
  }

  /** Resolves true once the run's invocation completed (any outcome), false if aborted or
   *  unknown (404). A lost connection (the server restarting) attaches again. */
  private async attach(workflow: string, runId: string, signal: AbortSignal): Promise<boolean> {
    for (let wait = 100; !signal.aborted; wait = Math.min(wait * 2, 2000)) {
      try {
        const r = await fetch(`${this.ingress}/restate/workflow/${serviceName(workflow)}/${encodeURIComponent(runId)}/attach`, { signal });
        await r.arrayBuffer();
        // Our handler's terminal failures answer 500; 429/502/503/504 come from the server
        // restarting or a proxy in front of it: attach again rather than call it completed.
        if (r.status === 429 || (r.status >= 502 && r.status <= 504)) throw new Error(`attach answered ${r.status}`);
        return r.status !== 404;
      } catch {
        if (signal.aborted || this.stopping) return false;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
    return false;
  }

  private settledOrAfter(runId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const waiters = this.settledWaiters.get(runId) ?? new Set();
      this.settledWaiters.set(runId, waiters);
      const done = () => {
        cancelTimer();
        signal.removeEventListener('abort', done);
        waiters.delete(done);
        if (waiters.size === 0) this.settledWaiters.delete(runId);
        resolve();
      };
      const cancelTimer = setLongTimeout(done, ms);
      waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private wakeSettled(runId: string, view?: RunView): void {
    if (view) {
      this.settledViews.set(runId, view);
      // Bounded: only recent outcomes are kept for result() callers.
      if (this.settledViews.size > 10_000) this.settledViews.delete(this.settledViews.keys().next().value!);
    }
    // A short delay: the handler's last state write reaches the server just after this.
    setTimeout(() => this.wakeWaiters(runId), 2);
  }

  private wakeWaiters(runId: string): void {
    for (const w of [...(this.settledWaiters.get(runId) ?? [])]) w();
  }

  /** A workflow file's child ended: kept in Restate for `runs describe` (output-object.ts).
   *  Best effort, like the SQLite backend's write of it: a failure is logged, the run goes on. */
  private async saveChildOutput(runId: string, output: ChildOutput): Promise<void> {
    const res = await retryWhileUnknown(() => httpJson('POST', `${this.ingress}/${OUTPUT_OBJECT}/${encodeURIComponent(runId)}/save/send`, output)).catch((err: Error) => ({ ok: false, status: 0, text: err.message }));
    if (!res.ok) this.log.log('warn', `keeping the child output of run ${runId} failed: ${res.text.slice(0, 200)}`);
  }

  /** The run's code no longer matches its journal: record why, then end the invocation. */
  private async recordDivergence(runId: string, workflow: string, error: ErrorInfo): Promise<void> {
    const run: OutboxRun = { runId, workflow, version: this.o.registry.find(workflow)?.version ?? 'unknown', input: null };
    await this.o.triggerStore.write((w) => w.recordRunFailure(run, error, this.o.clock.now()));
    // Also in Restate, so every replica and any data dir's CLI show the same failure.
    const res = await retryWhileUnknown(() => httpJson('POST', `${this.ingress}/${DIVERGENCE_OBJECT}/${encodeURIComponent(runId)}/record`, error)).catch((err: Error) => ({ ok: false, status: 0, text: err.message }));
    if (!res.ok) this.log.log('warn', `recording the divergence of run ${runId} in Restate failed (this data dir still has it): ${res.text.slice(0, 200)}`);
    const found = await this.invocation(runId, workflow);
    if (found) await this.admin.kill(found.inv.id);
    this.wakeSettled(runId);
  }

  // ---- workflow files: approvals (file-runs.ts) ---------------------------------------

  async approvals(workflow: string): Promise<ApprovalRecord[]> {
    this.ensureStarted();
    return this.files ? this.files.approvals(workflow) : [];
  }

  async approveFile(approval: ApprovalRecord): Promise<string[]> {
    this.ensureStarted();
    if (!this.files) throw new ValidationError(`workflow '${approval.workflow}' is not a workflow file: it needs no approval`);
    return this.files.approveFile(approval);
  }

  private get retention(): RetentionSettings {
    return this.o.retention ?? { maxAgeMs: DEFAULT_RETENTION_MS, batchSize: DEFAULT_GC_BATCH };
  }

  /** Retention on Restate: Restate itself drops finished runs after the same age (the
   *  services' workflowRetention); this removes what the engine keeps of them in its file
   *  (outbox rows, divergence records, signals, old inbox events), for runs Restate no longer
   *  holds or holds completed. A run Restate still runs (asleep, waiting, parked) stays. */
  async gc(options: GcOptions): Promise<GcReport> {
    this.ensureStarted();
    const store = this.o.triggerStore;
    if (!store.staleRuns || !store.forgetRuns || !store.forgetEvents) throw new EngineStateError('this trigger store keeps no retention data');
    const cutoff = cutoffOf(this.o.clock.now(), this.retention);
    const report: GcReport = { dryRun: !!options.dryRun, cutoff: new Date(cutoff).toISOString(), runs: 0, sample: [], events: 0, batches: 0, pagesReclaimed: 0, unreferencedVersions: [] };
    const stale = await store.staleRuns(cutoff, 10_000);
    for (let i = 0; i < stale.length; i += this.retention.batchSize) {
      const batch = stale.slice(i, i + this.retention.batchSize);
      const live = new Set(
        (await this.admin.query<{ k: string }>(
          `SELECT target_service_key AS k FROM sys_invocation WHERE target_handler_name = 'run' AND status != 'completed' AND target_service_key IN (${batch.map((r) => sqlString(r.runId)).join(',')})`,
        )).map((r) => r.k),
      );
      const gone = batch.filter((r) => !live.has(r.runId));
      if (report.sample.length < 100) report.sample.push(...gone.slice(0, 100 - report.sample.length).map((r) => ({ runId: r.runId, workflow: r.workflow, status: 'finished' as const, finishedAt: new Date(r.updatedAt).toISOString() })));
      report.runs += options.dryRun ? gone.length : await store.forgetRuns(gone.map((r) => r.runId), cutoff);
      report.batches++;
    }
    if (options.dryRun) {
      report.events = (await store.listEvents({ limit: 100_000 })).filter((e) => Date.parse(e.createdAt) <= cutoff).length;
      return report;
    }
    for (let n = -1; n !== 0; report.batches++) report.events += n = await store.forgetEvents(cutoff, this.retention.batchSize);
    this.o.telemetry?.meters?.retained(report.runs, report.events);
    return report;
  }

  async idle(): Promise<void> {
    // Time is real on Restate (no manual clock): nothing to drain here.
  }
}

function unlimited(ac: AbortController): AbortController {
  setMaxListeners(0, ac.signal);
  return ac;
}

/** With triggers in Restate (options.triggers 'restate') events and schedules never pass
 *  through this engine's trigger store, where a debounced trigger is recorded once: a
 *  debounced workflow may be triggered by engine.trigger (manual()) only there. */
function refuseSharedDebounce(registry: WorkflowRegistry): void {
  for (const { definition: d } of registry.all()) {
    const t = d.debounce && d.triggers.find((x) => x.type !== 'manual');
    if (t) throw new NotSupportedError(`workflow '${d.name}' options.debounce: its ${t.type}() trigger cannot be debounced with triggers in Restate (triggers: 'restate'); only engine.trigger (manual()) is debounced there (docs/flow-control.md, Debounce)`);
  }
}
