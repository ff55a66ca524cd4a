// The composition root: the only place that names concrete adapters. The backend is
// chosen here, once, from the resolved config.
import { resolve } from 'node:path';
import { Container, withContainerReflect } from './inversify.ts';
import { NotSupportedError } from '../src/domain/errors.ts';
import { SystemClock } from '../src/adapters/clock/system-clock.ts';
import { SqliteExecutor } from '../src/adapters/sqlite/executor.ts';
import type { FaultPoints } from '../src/adapters/sqlite/fault-points.ts';
import { SqliteTriggerStore } from '../src/adapters/sqlite/trigger-store.ts';
import { cronCalendar } from '../src/adapters/cron/cron-calendar.ts';
import type { CalendarFactory } from '../src/ports/calendar.ts';
import type { Clock } from '../src/ports/clock.ts';
import type { DurableExecutor } from '../src/ports/executor.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { Scheduler } from '../src/ports/scheduler.ts';
import type { TriggerStore } from '../src/ports/trigger-store.ts';
import type { WebhookFetchFactory, WebhookListenerFactory } from '../src/ports/webhook-listener.ts';
import { Engine, type ControlFactory } from '../src/runtime/engine.ts';
import { StepEvents } from '../src/runtime/step-events.ts';
import { engineLoggerFor, runLogFor, telemetryFor } from './telemetry.ts';
import { WorkflowRegistry, type FileDescription } from '../src/runtime/registry.ts';
import type { FileSessionFactory } from '../src/runtime/session-factory.ts';
import { FileGate, type FileDescriber } from '../src/runtime/file-gate.ts';
import { TimerScheduler } from '../src/runtime/timer-scheduler.ts';
import { CapabilityRegistry } from '../src/runtime/capabilities.ts';
import { DrainRouter } from '../src/runtime/drain-router.ts';
import { ENGINE_ID_SETTING } from '../src/adapters/restate/switch-guard.ts';
import { stepEventLogOn, type ResolvedConfig } from './config.ts';
import { preparePlainWorkflows } from './plain.ts';
import { payloadCodecFor } from './codec.ts';
import { snapshotDropper } from './snapshot-gc.ts';
import { DEFAULT_GC_BATCH, DEFAULT_RETENTION_MS } from '../src/domain/retention.ts';
import { randomUUID } from '../src/platform/random-uuid.ts';

/** Config retention as the executors take it; the periodic sweep only on the system clock
 *  (a test's manual clock sweeps when the test calls engine.gc()). */
function retentionOf(cfg: ResolvedConfig, sweep: boolean) {
  const r = cfg.retention;
  return { maxAgeMs: r?.maxAge ?? DEFAULT_RETENTION_MS, batchSize: r?.batchSize ?? DEFAULT_GC_BATCH, sweepEveryMs: sweep ? (r?.sweepEvery ?? 600_000) : undefined };
}

export const TOKENS = {
  config: Symbol('config'),
  clock: Symbol('clock'),
  random: Symbol('random'),
  registry: Symbol('registry'),
  calendar: Symbol('calendar'),
  /** When due work is claimed: the in-process TimerScheduler on the Clock (both backends today). */
  scheduler: Symbol('scheduler'),
  /** Trigger state and run outbox: the data dir's SQLite file (both backends). */
  triggerStore: Symbol('triggerStore'),
  /** The engine's logger (config `log`): the Restate SDK's messages go through it too. */
  logger: Symbol('logger'),
  executor: Symbol('executor'),
  engine: Symbol('engine'),
} as const;

export interface Overrides {
  clock?: Clock;
  random?: () => number;
  /** Test-only fault points for the SQLite executor (reliability tests). */
  faults?: FaultPoints;
  /** The Restate adapter, loaded only when that backend is chosen (see loadBackend). */
  restate?: typeof import('../src/adapters/restate/executor.ts').RestateExecutor;
  /** The Deno runner and the described workflow files (see loadRunner). */
  runner?: { files: FileDescription[]; sessions: FileSessionFactory; describer: FileDescriber; close(): Promise<void> };
}

/** Starts the Deno runner and describes every workflow file (each in a child with no
 *  permission) when the config names any; nothing Deno-related loads otherwise. */
export async function loadRunner(config: ResolvedConfig): Promise<Pick<Overrides, 'runner'>> {
  if (config.workflowFiles.length === 0) return {};
  const { DenoRunner } = await import('../src/adapters/deno/deno-runner.ts');
  const runner = new DenoRunner({
    dataDir: config.dataDir, binary: config.deno?.binary, maxPayloadBytes: config.maxPayloadBytes,
    heartbeatMs: config.deno?.heartbeatInterval, heartbeatTimeoutMs: config.deno?.heartbeatTimeout, warmIdleMs: config.deno?.warmIdle,
    sandbox: config.deno?.sandbox, memoryMiB: config.deno?.memory, maxFileBytes: config.deno?.maxFileBytes, maxWriteBytes: config.deno?.maxWriteBytes, describeTimeoutMs: config.deno?.describeTimeout,
    protect: [
      ...[config.encryption?.keyFile ?? (process.env.TRANQUIL_KEY_FILE || undefined)].filter((f): f is string => f !== undefined).map((f) => ({ what: 'the payload key file', path: resolve(f) })),
      ...(config.deno?.protect ?? []).map((f) => ({ what: 'a protected path (config deno.protect)', path: resolve(f) })),
    ],
    // The children's log frames go where the engine's own messages go (config `log`).
    logger: engineLoggerFor(config),
  });
  await runner.start();
  const files = await Promise.all(config.workflowFiles.map((f) => runner.describe(f)));
  return { runner: { files, sessions: (log, wf, version, o) => runner.session(log, wf, version, o), describer: runner, close: () => runner.close() } };
}

/** Loads the chosen backend's heavy modules (the Restate SDK) only when it is chosen. */
export async function loadBackend(config: ResolvedConfig): Promise<Overrides> {
  if (config.backend !== 'restate') return {};
  const { RestateExecutor } = await import('../src/adapters/restate/executor.ts');
  return { restate: RestateExecutor };
}

/** hono and its node server load only when a webhook listener actually starts. */
const lazyWebhookListener: WebhookListenerFactory = async (options, handler) =>
  (await import('../src/adapters/http/webhook-listener.ts')).startWebhookListener(options, handler);
/** The same, as engine.handleWebhook's fetch handler: loads on the first delivery. */
const lazyWebhookFetch: WebhookFetchFactory = async (options, handler) =>
  (await import('../src/adapters/http/webhook-listener.ts')).createWebhookFetch(options, handler);

/** The control channel (docs/host.md, `control: true`): hono loads only when it opens. */
const lazyControl = (dataDir: string): ControlFactory => async (engine) =>
  (await import('../src/adapters/http/control-server.ts')).startControl(engine, dataDir);

/** What callers get from the container: resolution only, run with inversify's Reflect in place. */
export interface Composition {
  get<T>(token: symbol): T;
}

/** Binds everything (see bindAll); inversify's Reflect use never reaches the host's Reflect. */
export function buildContainer(config: ResolvedConfig, overrides: Overrides = {}): Composition {
  const c = withContainerReflect(() => bindAll(config, overrides));
  return { get: <T>(token: symbol): T => withContainerReflect(() => c.get<T>(token)) };
}

function bindAll(config: ResolvedConfig, overrides: Overrides): Container {
  const c = new Container({ defaultScope: 'Singleton' });
  c.bind<ResolvedConfig>(TOKENS.config).toConstantValue(config);
  c.bind<Clock>(TOKENS.clock).toConstantValue(overrides.clock ?? new SystemClock());
  c.bind<() => number>(TOKENS.random).toConstantValue(overrides.random ?? Math.random);
  const registry = new WorkflowRegistry(preparePlainWorkflows(config), overrides.runner?.files);
  // A workflow file refused at registration (a queue conflicting with the app's): said once.
  for (const r of registry.refused) engineLoggerFor(config).log('error', r.reason);
  // The host's capability providers: the engine registers them, the executor calls them.
  const capabilities = new CapabilityRegistry();
  c.bind<WorkflowRegistry>(TOKENS.registry).toConstantValue(registry);
  // The approval gate of workflow files: only when the config names any (loadRunner).
  const fileGate = overrides.runner ? new FileGate(registry, overrides.runner.describer) : undefined;
  c.bind<CalendarFactory>(TOKENS.calendar).toConstantValue(cronCalendar);
  c.bind<Logger>(TOKENS.logger).toConstantValue(engineLoggerFor(config));
  // One codec for the file and the backend's journal: built (and a bad keyring refused) here.
  const codec = payloadCodecFor(config);
  const otel = telemetryFor(config);
  const telemetry = otel?.telemetry;
  const runLog = runLogFor(config);
  // One hub: the executors emit the step events of the runs they execute, runs.subscribe reads them.
  const stepEvents = new StepEvents(engineLoggerFor(config));
  c.bind<Scheduler>(TOKENS.scheduler).toDynamicValue((ctx) => new TimerScheduler({ clock: ctx.get<Clock>(TOKENS.clock) }));
  // Concrete on purpose: the SQLite executor shares this file's connection (its runs and the
  // trigger state commit together); the Restate executor sees it only as a TriggerStore.
  c.bind<SqliteTriggerStore>(TOKENS.triggerStore).toDynamicValue((ctx) => {
    const cfg = ctx.get<ResolvedConfig>(TOKENS.config);
    return new SqliteTriggerStore({ dataDir: cfg.dataDir, durability: cfg.durability, faults: overrides.faults, codec });
  });
  c.bind<DurableExecutor>(TOKENS.executor).toDynamicValue((ctx) => {
    const cfg = ctx.get<ResolvedConfig>(TOKENS.config);
    const common = {
      clock: ctx.get<Clock>(TOKENS.clock), registry: ctx.get<WorkflowRegistry>(TOKENS.registry),
      calendar: ctx.get<CalendarFactory>(TOKENS.calendar), scheduler: ctx.get<Scheduler>(TOKENS.scheduler), capabilities,
    };
    switch (cfg.backend) {
      case 'sqlite':
        return new SqliteExecutor({
          ...common, triggerStore: ctx.get<SqliteTriggerStore>(TOKENS.triggerStore), random: ctx.get<() => number>(TOKENS.random),
          maxConcurrentRuns: cfg.maxConcurrentRuns, faults: overrides.faults, maxPayloadBytes: cfg.maxPayloadBytes, cancelGraceMs: cfg.cancelGrace,
          fileSessions: overrides.runner?.sessions, fileGate: fileGate, telemetry, runLog, stepEvents,
          retention: { ...retentionOf(cfg, overrides.clock === undefined), dropVersions: overrides.runner ? snapshotDropper(cfg.dataDir, registry) : undefined },
        });
      case 'restate': {
        if (!overrides.restate) throw new NotSupportedError("backend 'restate' was not loaded: build the container with loadBackend(config)");
        const primary = new overrides.restate({
          ...common, triggerStore: ctx.get<TriggerStore>(TOKENS.triggerStore), dataDir: cfg.dataDir,
          ingressUrl: cfg.restate?.ingressUrl, adminUrl: cfg.restate?.adminUrl, identityKeys: cfg.restate?.identityKeys,
          endpoint: cfg.restate?.endpoint, triggers: cfg.restate?.triggers, deploymentSweepMs: cfg.restate?.deploymentSweep,
          stepEventLog: stepEventLogOn(cfg.restate),
          tracingEndpoint: cfg.restate?.tracingEndpoint,
          maxPayloadBytes: cfg.maxPayloadBytes,
          cancelGraceMs: cfg.cancelGrace,
          codec,
          retention: retentionOf(cfg, false),
          logger: ctx.get<Logger>(TOKENS.logger),
          telemetry,
          runLog,
          stepEvents,
          files: overrides.runner && fileGate ? { sessions: overrides.runner.sessions, blockReason: (wf, v, a) => fileGate.blockReason(wf, v, a) } : undefined,
        });
        // The drain (docs/restate.md, "Switching a data dir from SQLite"): the runs SQLite
        // started before the switch finish on this file, executed by a SQLite executor that
        // touches only them; every new run starts on Restate.
        const file = ctx.get<SqliteTriggerStore>(TOKENS.triggerStore);
        const drained = new Set<string>();
        const local = new SqliteExecutor({
          ...common, scheduler: new TimerScheduler({ clock: common.clock }), triggerStore: file, random: ctx.get<() => number>(TOKENS.random),
          maxConcurrentRuns: cfg.maxConcurrentRuns, maxPayloadBytes: cfg.maxPayloadBytes, cancelGraceMs: cfg.cancelGrace,
          fileSessions: overrides.runner?.sessions, fileGate: fileGate, telemetry, runLog, stepEvents,
          drain: { runIds: drained, publish: (req) => primary.emit(req) },
        });
        return new DrainRouter({
          primary, local, drained,
          adopt: async () => (await file.open(), file.adoptDrain(ENGINE_ID_SETTING, common.clock.now())),
          release: () => file.close(),
        });
      }
    }
  });
  c.bind<Engine>(TOKENS.engine).toDynamicValue((ctx) => {
    otel?.watch(ctx.get<DurableExecutor>(TOKENS.executor));
    return new Engine(ctx.get<DurableExecutor>(TOKENS.executor), ctx.get<WorkflowRegistry>(TOKENS.registry), ctx.get<Clock>(TOKENS.clock), {
        webhook: ctx.get<ResolvedConfig>(TOKENS.config).webhook,
        maxPayloadBytes: ctx.get<ResolvedConfig>(TOKENS.config).maxPayloadBytes,
        webhookListener: lazyWebhookListener,
        webhookFetch: lazyWebhookFetch,
        newId: randomUUID,
        files: fileGate,
        close: overrides.runner?.close,
        capabilities,
        logger: ctx.get<Logger>(TOKENS.logger),
        telemetry,
        stepEvents,
        ...(ctx.get<ResolvedConfig>(TOKENS.config).control ? { control: lazyControl(ctx.get<ResolvedConfig>(TOKENS.config).dataDir) } : {}),
      });
  });
  return c;
}
