// The Engine: the public embedding API (README.md, Quick start), backend-neutral. It validates every
// argument at the boundary, then delegates to the DurableExecutor chosen in compose/.
import type { GcOptions, GcReport } from '../domain/retention.ts';
import { nodeCrypto } from './node-crypto.ts';
import * as z from 'zod';
import { MAX_DURATION_MS, parseDuration, type Duration } from '../domain/duration.ts';
import { NotSupportedError, RunStateError, UnknownRunError, ValidationError } from '../domain/errors.ts';
import { explain, type Explanation } from '../domain/explain.ts';
import { listedQueues, type InternalQueue } from '../domain/internal-queues.ts';
import type { QueueSummary } from '../domain/queue-summary.ts';
import { DEFAULT_CANCEL_BY, MAX_CANCEL_BY, type CancelOptions } from '../domain/cancel.ts';
import { DEFAULT_MAX_PAYLOAD_BYTES, type Json } from '../domain/json.ts';
import { decodeValue, encodeValue, isTaggedValue } from '../domain/value-codec.ts';
import type { RetryOptions, RetryResult } from '../domain/retry-point.ts';
import { RESERVED_IN_NAMES } from '../domain/step-names.ts';
import { RUN_STATUSES, isTerminal } from '../domain/run-status.ts';
import type { ResumeResult } from '../domain/run-control.ts';
import type { HeldPolicy, WorkflowPause, WorkflowResumeResult } from '../domain/workflow-pause.ts';
import { entriesOfViews, forkPlan, type ForkOptions, type ForkResult } from '../domain/run-fork.ts';
import type { RunFilter, RunId, RunPage, RunView, TypedRunView } from '../domain/run-view.ts';
import { parseOrThrow } from '../domain/validate.ts';
import { once } from '../domain/once.ts';
import type { Clock } from '../ports/clock.ts';
import type { DurableExecutor, EmitResult } from '../ports/executor.ts';
import type { EventFilter, EventView, ScheduleView, SlotFilter, SlotView, TriggerState } from '../ports/triggers.ts';
import type { WebhookFetchFactory, WebhookListenerFactory } from '../ports/webhook-listener.ts';
import type { WorkflowRegistry } from './registry.ts';
import { isWorkflowDefinition, runTimeoutMs, type WorkflowDefinition } from '../../sdk/workflow.ts';
import { anySignalSchemas, checkedInput, checkedSignal, checkEventPayload } from './boundary-schemas.ts';
import { explainSchedules } from '../domain/schedule.ts';
import { WebhookHost, type WebhookConfig } from './webhook-host.ts';
import { approveCommand, declarationDiff, type DeclarationDiff } from '../domain/approval.ts';
import type { Permissions } from '../domain/permissions.ts';
import type { FileGate } from './file-gate.ts';
import { CapabilityRegistry, capabilitiesApi, type CapabilitiesApi } from './capabilities.ts';
import type { Logger } from '../ports/logger.ts';
import type { RunTelemetry } from '../ports/telemetry.ts';
import { tracedStart } from './traced-start.ts';
import { debouncedTrigger, waitForRun } from './debounce.ts';
import { cascadeCancel, explainWaitingParent, retryWithChildren } from './child-runs.ts';
import { LIFECYCLE_EVENTS, Notifier, type LifecycleEventType, type LifecycleHandler } from './notifier.ts';
import { liveOutputApi, type LiveOutputApi } from './live-output.ts';
import { StepEvents } from './step-events.ts';

const idSchema = once(() => z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').regex(/^[A-Za-z0-9_.:\-]+$/, 'letters, digits and _ . : - only'));
const nameSchema = once(() => z.string().min(1, 'must not be empty').max(200, 'at most 200 characters'));
const filterSchema = once(() => z
  .object({
    status: z.enum(RUN_STATUSES).optional(),
    workflow: z.string().min(1).optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
    cursor: z.string().min(1, 'must not be empty').max(1000, 'at most 1000 characters').optional(),
    since: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO 8601 instant').transform((s) => new Date(s).toISOString()).optional(),
    until: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO 8601 instant').transform((s) => new Date(s).toISOString()).optional(),
    parent: idSchema().optional(),
    queue: z.string().min(1, 'must not be empty').max(120).optional(),
  })
  .strict());

/** A page of `runs.list`: the runs (an array, as before paging existed) and, when more runs
 *  match, `next` to pass as `cursor`. `next` is not enumerable, so the page still deep-equals
 *  and serializes as the plain array it always was. */
export type RunList = RunView[] & { readonly next?: string };

function asList(page: RunPage): RunList {
  const list = page.runs as RunList;
  if (page.next !== undefined) Object.defineProperty(list, 'next', { value: page.next, enumerable: false });
  return list;
}

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  return parseOrThrow(schema, value, what);
}

/** An argument in its stored form (src/domain/value-codec.ts) within the size limit, or a
 *  one-line ValidationError before anything is stored. */
function jsonArg(value: unknown, what: string, maxBytes: number): Json {
  try {
    return encodeValue(value, what, maxBytes).stored;
  } catch (err) {
    throw new ValidationError((err as Error).message);
  }
}

// Built on first use and kept (once): a zod schema is costly to construct, and trigger/emit
// are hot paths; an engine that never takes an API path never holds its schemas.
const triggerOptionsSchema = once(() => z.object({ runId: idSchema().optional(), timeout: z.union([z.number(), z.string()]).optional() }).strict());
const emitOptionsSchema = once(() => z.object({ id: idSchema().optional() }).strict());
const resultOptionsSchema = once(() => z.object({ timeout: z.union([z.number(), z.string()]).optional() }).strict());
const retryOptionsSchema = once(() => z.object({ from: nameSchema().optional() }).strict());
// Printable text only: it is shown in `why` and the panel as is.
const cancelOptionsSchema = once(() => z.object({
  by: z.string().min(1, 'must not be empty').max(MAX_CANCEL_BY, `at most ${MAX_CANCEL_BY} characters`).regex(/^[^\p{Cc}]+$/u, 'no control characters').optional(),
}).strict());
const rerunOptionsSchema = once(() => z.object({ runId: idSchema().optional() }).strict());
const forkOptionsSchema = once(() => z.object({
  from: z.union([nameSchema(), z.number().int('a position is a whole number').min(0, 'a position is 0 or more')]),
  runId: idSchema().optional(),
}).strict());
const workflowResumeOptionsSchema = once(() => z.object({ held: z.enum(['run', 'skip']).optional() }).strict());
const approveOptionsSchema = once(() => z.object({ hash: z.string().regex(/^[0-9a-f]{16}$/, 'a declaration hash is 16 hex digits').optional() }).strict());

const eventFilterSchema = once(() => z
  .object({ name: z.string().min(1).optional(), unmatched: z.boolean().optional(), limit: z.number().int().min(1).max(10_000).optional() })
  .strict());
const slotFilterSchema = once(() => z
  .object({
    workflow: z.string().min(1).optional(),
    fate: z.enum(['fired', 'caught-up', 'missed', 'skipped']).optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
  })
  .strict());

/** engine.trigger's options. */
export interface TriggerOptions {
  /** The run's id (a second trigger with it returns the first run). */
  runId?: string;
  /** This run's deadline, counted from now ('30m', or ms), overriding the workflow's
   *  `timeout` (docs/control.md). */
  timeout?: Duration;
}

/** `engine.events`: the event inbox (what engine.emit and ctx.emit published). */
export interface EventsApi {
  /** Newest first. `unmatched: true` = events no workflow subscribed to (kept, not dropped). */
  list(filter?: EventFilter): Promise<EventView[]>;
}

/** `engine.schedules`: the cron triggers, their slots and why a slot did or did not run. */
export interface SchedulesApi {
  /** Every schedule trigger the engine knows, with its next slot. */
  list(): Promise<ScheduleView[]>;
  /** The slot ledger, newest first: every slot's fate (fired, caught-up, missed, skipped). */
  slots(filter?: SlotFilter): Promise<SlotView[]>;
  /** "Why didn't my 9am job run?": the workflow's schedules and recent slot fates in plain English. */
  explain(workflow: string): Promise<{ workflow: string; summary: string; details: string[] }>;
}

export interface EngineOptions {
  /** Makes the ids of runs and events started without one (default: node:crypto's randomUUID,
   *  loaded on first use; compose passes src/platform/random-uuid.ts, which needs no node:crypto). */
  newId?: () => string;
  webhook?: WebhookConfig;
  webhookListener?: WebhookListenerFactory;
  /** Serves engine.handleWebhook (the listener's checks as a fetch handler). */
  webhookFetch?: WebhookFetchFactory;
  /** Largest JSON of a run's input, a signal's or an event's payload; default DEFAULT_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes?: number;
  /** The approval gate of workflow files (present when the config names any). */
  files?: FileGate;
  /** Released by stop() after the executor (the Deno runner's loopback listener). */
  close?: () => Promise<void>;
  /** The host's capability providers (shared with the executor, which calls them). */
  capabilities?: CapabilityRegistry;
  logger?: Logger;
  /** Spans of triggers and emits (docs/observability.md); the executor traces the runs. */
  telemetry?: RunTelemetry;
  /** Opens the control channel (docs/host.md, "An app's own engine: `control: true`") once
   *  the engine owns its data dir; closed first by stop(). An adapter chosen in compose/. */
  control?: ControlFactory;
  /** The per-step events the executors emit (runs.subscribe); absent: a hub of its own that
   *  no executor emits to. */
  stepEvents?: StepEvents;
}

/** The control channel an engine opens for attach() and the CLI: where it listens. */
export interface RunningControl {
  readonly info: { host: string; port: number };
  stop(): Promise<void>;
}
export type ControlFactory = (engine: Engine) => Promise<RunningControl>;

/** A workflow file's permission declaration as it is on disk, and its standing. */
export interface DeclarationView {
  workflow: string;
  /** The file's version on disk (content digest). */
  version: string;
  /** declarationHash of the declaration: what an approval names. */
  hash: string;
  declaration: Permissions;
  approved: boolean;
  /** The newest approval's hash, if any. */
  approvedHash?: string;
  /** Grants added/removed since the newest approval (everything is added when none). */
  diff: DeclarationDiff;
  /** The command that approves it. */
  approveCommand: string;
}

/** `engine.workflows`: workflow files' permission declarations and their approval. */
export interface WorkflowsApi {
  /** The declaration on disk of workflow file `name` (described again, in a child with no
   *  permission, if the file changed), its hash and whether it is approved. */
  declaration(name: string): Promise<DeclarationView>;
  /** Approves the declaration on disk of workflow file `name` (docs/runner.md, Approval):
   *  stored in the data dir by workflow name and declaration hash; the workflow's `blocked`
   *  runs it allows are released and start. `options.hash`: approve only if the declaration
   *  on disk still has this hash (what the user was shown). The engine never calls this by
   *  itself. */
  approve(name: string, options?: { hash?: string }): Promise<DeclarationView & { released: string[] }>;
  /** Every registered workflow, by name, with `paused` (who, when) while it is paused. */
  list(): Promise<WorkflowListItem[]>;
  /** Pauses the whole workflow (docs/control.md, "Pause a workflow"): every run of it created
   *  from now on (trigger, event, schedule slot, webhook, child start) is created as always,
   *  its id, input and dedupe recorded, and held before its code runs: it shows `paused`
   *  (`paused.held`), holds no slot and no memory. Runs already executing go on. Pausing a
   *  paused workflow changes nothing (the first asker stays). `options.by`: who asks
   *  (default 'api'). */
  pause(name: string, options?: { by?: string }): Promise<WorkflowPause>;
  /** Unpauses it. `options.held`: `'run'` (default) lets its held runs go on in creation
   *  order; `'skip'` ends each without running its code (succeeded, output
   *  `{ outcome: 'skipped', reason }`). RunStateError when it is not paused. */
  resume(name: string, options?: { held?: HeldPolicy }): Promise<WorkflowResumeResult>;
}

/** `engine.queues`: the flow-control queues as they stand (docs/flow-control.md, "Watching
 *  queues"): what the Runs panel's queue rows show. */
export interface QueuesApi {
  /** Every queue with its limits, bodies (or runs) running and waiting, its busiest keys (at
   *  most 10) and, with a queue-wide rate limit, the starts its window counts now. The
   *  internal queues of `runs.singleton` and `runs.rateLimit` (`~singleton.<workflow>`,
   *  `~rate.<workflow>`) are left out unless `options.all`, then labelled `internal`, as
   *  `tranquil queues list` does. SQLite: every queue an engine declared on the data dir;
   *  Restate: the queues with anything held, waiting or counted now. */
  list(options?: { all?: boolean }): Promise<(QueueSummary & { internal?: InternalQueue })[]>;
}

/** A workflow as workflows.list shows it. */
export interface WorkflowListItem {
  name: string;
  /** While the workflow is paused: who paused it and when. */
  paused?: { by: string; at: string };
}

/** `engine.runs`: read, list, cancel, retry and explain runs. Each method validates its
 *  arguments (ValidationError naming the field) and throws UnknownRunError for an unknown id. */
export interface RunsApi extends LiveOutputApi {
  /** The run's current view: status, input, output or error, and every step. */
  get(runId: string): Promise<RunView>;
  /** Newest first, `limit` (default 100) per page; `next` on the answer when more match:
   *  `runs.list({ ...filter, cursor: page.next })` gives the following page. */
  list(filter?: RunFilter): Promise<RunList>;
  /** Asks the run to stop (docs/semantics.md, Cancel). `options.by` names who asks (default
   *  'api'); it is recorded with the time and `why` says it. Throws RunStateError for a run
   *  that already finished. */
  cancel(runId: string, options?: CancelOptions): Promise<void>;
  /** Resumes a failed run: at its earliest failed `do` or `use` step, or at `options.from` (a recorded
   *  step name). Returns what the journal gave up (docs/semantics.md, Retry). */
  retry(runId: string, options?: RetryOptions): Promise<RetryResult>;
  /** Why the run is where it is, in one sentence and details (what it waits for, until when,
   *  the error that failed it); what `tranquil why <runId>` prints. */
  explain(runId: string): Promise<Explanation>;
  /** Starts a NEW run of a finished run's workflow (any terminal state) with its input,
   *  linked both ways (`rerunOf` on the new run, `reruns` on the old). `options.runId`: the
   *  new run's id. docs/control.md. */
  rerun(runId: string, options?: { runId?: string }): Promise<{ runId: string; created: boolean }>;
  /** Starts a NEW run of a run's workflow (any status), at the original's version, with its
   *  input, from step `options.from` (a recorded step's name or position): the steps before
   *  it reuse the original's recorded outcomes (their bodies do not run again), that step and
   *  everything after it run fresh. Linked both ways as a rerun (`rerunOf`, `reruns`), and the
   *  new run's view says `forkedFrom`. docs/control.md. */
  fork(runId: string, options: ForkOptions): Promise<ForkResult>;
  /** Pauses a live run at its next step boundary: a running body finishes and is recorded;
   *  while paused it holds no memory and no concurrency slot, and what comes due waits for
   *  the resume. `options.by` names who asks (default 'api'). docs/control.md. */
  pause(runId: string, options?: CancelOptions): Promise<void>;
  /** A paused run goes on; a cancelled run continues from where its cancel landed (recorded
   *  results reused, the cancelled step runs again). docs/control.md. */
  resume(runId: string): Promise<ResumeResult>;
}

/**
 * The embedding API: start and stop the engine, start runs (trigger, emit), talk to them
 * (signal, result) and read them (runs, events, schedules). Made by createEngine (or
 * createTestEngine); the same on every backend. Every method validates its arguments and
 * throws a one-line ValidationError naming the field before anything is stored.
 *
 * @example
 * ```ts
 * const engine = await createEngine({ dataDir: '.tranquil', workflows });
 * await engine.start();
 * const { runId } = await engine.trigger('activation-nudge', { userId: 'u1' });
 * console.log((await engine.runs.explain(runId)).summary);
 * await engine.stop();
 * ```
 */
export class Engine {
  /** Read, list, cancel, retry and explain runs. */
  readonly runs: RunsApi;
  /** The event inbox. */
  readonly events: EventsApi;
  /** Cron triggers and their slot ledger. */
  readonly schedules: SchedulesApi;
  /** Workflow files' permission declarations and their approval (docs/runner.md). */
  readonly workflows: WorkflowsApi;
  /** Providers of capability steps (step.use): docs/host.md. */
  readonly capabilities: CapabilitiesApi;
  /** Flow-control queues as they stand: docs/flow-control.md. */
  readonly queues: QueuesApi;
  private readonly providers: CapabilityRegistry;
  private readonly files: FileGate | undefined;
  private readonly webhooks: WebhookHost | undefined;
  private readonly maxPayloadBytes: number;

  private readonly closeExtras: (() => Promise<void>) | undefined;
  private readonly newId: () => string;
  private readonly notifier: Notifier;
  private readonly controlFactory: ControlFactory | undefined;
  private readonly telemetry: RunTelemetry | undefined;
  private control: RunningControl | undefined;

  /** @internal Built by createEngine (compose/), not by apps. */
  constructor(
    /** @internal The backend's executor (compose/, the CLI and tests reach it). */
    readonly executor: DurableExecutor,
    /** @internal */
    readonly registry: WorkflowRegistry,
    private readonly clock: Clock,
    options: EngineOptions = {},
  ) {
    this.closeExtras = options.close;
    this.newId = options.newId ?? (() => nodeCrypto().randomUUID());
    this.controlFactory = options.control;
    this.providers = options.capabilities ?? new CapabilityRegistry();
    this.capabilities = capabilitiesApi(this.providers, async (c, a) => this.executor.wakeParked?.(c, a));
    this.notifier = new Notifier(executor, () => clock.now(), { logger: options.logger });
    this.telemetry = options.telemetry;
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.webhooks = options.webhookListener
      ? new WebhookHost(registry, executor, () => this.triggerState(), { listen: options.webhookListener, fetch: options.webhookFetch }, options.webhook, this.maxPayloadBytes, options.telemetry)
      : undefined;
    this.events = {
      list: async (filter = {}) => this.triggerState().listEvents(check(eventFilterSchema(), filter, 'events.list filter')),
    };
    this.schedules = {
      list: async () => this.triggerState().listSchedules(),
      slots: async (filter = {}) => this.triggerState().listSlots(check(slotFilterSchema(), filter, 'schedules.slots filter')),
      explain: async (workflow) => this.explainSchedules(check(nameSchema(), workflow, 'workflow')),
    };
    this.files = options.files;
    this.queues = {
      list: async (options = {}) => {
        const all = check(z.object({ all: z.boolean().optional() }).strict(), options, 'queues.list options').all === true;
        return listedQueues((await this.executor.queueSummaries?.(this.clock.now())) ?? [], all);
      },
    };
    this.workflows = {
      declaration: async (name) => this.declaration(check(nameSchema(), name, 'workflow')),
      approve: async (name, options = {}) => {
        const wf = check(nameSchema(), name, 'workflow');
        const opts = check(approveOptionsSchema(), options, 'workflows.approve options');
        const d = await this.declaration(wf);
        if (opts.hash !== undefined && opts.hash !== d.hash) {
          throw new ValidationError(`workflow '${wf}': the declaration on disk is ${d.hash}, not ${opts.hash} (the file changed since it was shown); nothing approved`);
        }
        if (!this.executor.approveFile) throw new NotSupportedError(`backend '${this.executor.backend}' does not run workflow files yet`);
        const released = await this.executor.approveFile({ workflow: wf, hash: d.hash, declaration: d.declaration, approvedAt: this.clock.now() });
        return { ...d, approved: true, approvedHash: d.hash, diff: { added: [], removed: [] }, released };
      },
      list: async () => {
        const paused = new Map((await (this.executor.workflowPauses?.() ?? Promise.resolve([]))).map((p) => [p.workflow, p]));
        return this.registry.all().map((w) => {
          const p = paused.get(w.definition.name);
          return p ? { name: w.definition.name, paused: { by: p.by, at: p.at } } : { name: w.definition.name };
        });
      },
      pause: async (name, options = {}) => {
        const wf = check(nameSchema(), name, 'workflow');
        const by = check(cancelOptionsSchema(), options, 'workflows.pause options').by ?? DEFAULT_CANCEL_BY;
        this.registry.get(wf);
        if (!this.executor.pauseWorkflow) throw new NotSupportedError(`backend '${this.executor.backend}' cannot pause workflows yet`);
        return this.executor.pauseWorkflow(wf, by);
      },
      resume: async (name, options = {}) => {
        const wf = check(nameSchema(), name, 'workflow');
        const held = check(workflowResumeOptionsSchema(), options, 'workflows.resume options').held ?? 'run';
        this.registry.get(wf);
        if (!this.executor.resumeWorkflow) throw new NotSupportedError(`backend '${this.executor.backend}' cannot resume workflows yet`);
        return { workflow: wf, held, runs: await this.executor.resumeWorkflow(wf, held) };
      },
    };
    this.runs = {
      ...liveOutputApi((id) => this.view(id), options.stepEvents ?? new StepEvents(options.logger), (id) => check(idSchema(), id, 'runId')),
      get: async (runId) => this.view(runId),
      list: async (filter = {}) => asList(await this.executor.listRuns(check(filterSchema(), filter, 'runs.list filter'))),
      cancel: async (runId, options = {}) => {
        const id = check(idSchema(), runId, 'runId');
        await this.executor.cancel(id, check(cancelOptionsSchema(), options, 'runs.cancel options').by ?? DEFAULT_CANCEL_BY);
        // Its children started with the default policy are cancelled too (child-runs.ts).
        await cascadeCancel(this.executor, id);
      },
      retry: async (runId, options = {}) => {
        const id = check(idSchema(), runId, 'runId');
        return retryWithChildren(this.executor, id, check(retryOptionsSchema(), options, 'runs.retry options'));
      },
      rerun: async (runId, options = {}) => this.rerun(check(idSchema(), runId, 'runId'), check(rerunOptionsSchema(), options, 'runs.rerun options')),
      fork: async (runId, options) => this.fork(check(idSchema(), runId, 'runId'), check(forkOptionsSchema(), options, 'runs.fork options')),
      pause: async (runId, options = {}) => {
        const id = check(idSchema(), runId, 'runId');
        const by = check(cancelOptionsSchema(), options, 'runs.pause options').by ?? DEFAULT_CANCEL_BY;
        if (!this.executor.pause) throw new NotSupportedError(`backend '${this.executor.backend}' cannot pause runs yet`);
        await this.view(id);
        await this.executor.pause(id, by);
      },
      resume: async (runId) => {
        const id = check(idSchema(), runId, 'runId');
        if (!this.executor.resume) throw new NotSupportedError(`backend '${this.executor.backend}' cannot resume runs yet`);
        await this.view(id);
        return this.executor.resume(id);
      },
      explain: async (runId) => {
        const now = this.clock.now();
        const why = async (v: RunView): Promise<Explanation> => explainWaitingParent(this.executor, explain(v, now), why);
        return why(await this.view(runId));
      },
    };
  }

  get backend(): string {
    return this.executor.backend;
  }

  /** Takes the data dir (DataDirInUseError when another engine holds it), resumes the runs
   *  in flight and arms their timers and schedules, and opens the webhook listener and the
   *  control channel when configured. Call once before any other method. */
  async start(): Promise<void> {
    await this.executor.start();
    // Providers registered before start: the runs parked on them (since a restart) resume.
    for (const p of this.providers.list()) void this.executor.wakeParked?.(p.capability, p.attrs).catch(() => {});
    try {
      await this.webhooks?.start();
    } catch (err) {
      await this.executor.stop();
      throw err;
    }
    // Only after the executor took the data dir's owner lease: an engine refused the dir
    // (DataDirInUseError) never reaches this, so it cannot replace the owner's serve.json.
    try {
      this.control = await this.controlFactory?.(this);
    } catch (err) {
      await this.webhooks?.stop();
      await this.executor.stop();
      throw err;
    }
    this.notifier.start();
  }

  /** Where the control channel listens (engine option `control: true`), once started. */
  get controlAddress(): { host: string; port: number } | undefined {
    return this.control && { host: this.control.info.host, port: this.control.info.port };
  }

  /** Lifecycle notifications (runtime/notifier.ts, docs/panel.md): the handler gets each
   *  transition of a run to this state once, also those that happened while the app was down.
   *  Returns the function that unsubscribes. */
  on(type: LifecycleEventType, handler: LifecycleHandler): () => void {
    const t = check(z.enum(LIFECYCLE_EVENTS), type, 'lifecycle event');
    if (typeof handler !== 'function') throw new ValidationError('engine.on: handler must be a function');
    return this.notifier.on(t, handler);
  }

  /** Stops taking work and releases the data dir: the signal of every running step aborts
   *  (nothing it returns after is recorded), runs in flight stay as they are in the journal
   *  and resume on the next start, and a pending result() rejects with EngineStateError. */
  async stop(): Promise<void> {
    // The control channel first: no request reaches an engine that is winding down.
    const control = this.control;
    this.control = undefined;
    await control?.stop();
    await this.notifier.stop();
    // The listener first: no new runs arrive while the executor winds down.
    await this.webhooks?.stop();
    await this.executor.stop();
    await this.closeExtras?.();
  }

  /** Retention now (docs/data.md): finished runs older than config retention.maxAge go, with
   *  their journal and inbox rows; `{ dryRun: true }` says what would go. Live runs never. */
  async gc(options: GcOptions = {}): Promise<GcReport> {
    if (!this.executor.gc) throw new NotSupportedError(`backend '${this.executor.backend}' has no retention`);
    return this.executor.gc({ dryRun: options.dryRun === true });
  }

  /** Re-scans due timers and schedule slots now; for hosts with a real resume signal
   *  (Electron's powerMonitor 'resume'). Wall-clock jumps are detected on their own too. */
  async rescan(): Promise<void> {
    await this.triggerState().rescan();
  }

  /** `http://127.0.0.1:<port>/hooks/<workflow>/<secret>` for a workflow with a webhook trigger;
   *  with `base` (where the app mounts {@link Engine.handleWebhook}, e.g.
   *  `'https://shop.example/hooks'`), `<base>/<workflow>/<secret>`, listener or not. */
  async webhookUrl(workflow: string, options: { base?: string } = {}): Promise<string> {
    const name = check(nameSchema(), workflow, 'workflow');
    const { base } = check(z.object({ base: z.string().min(1).optional() }).strict(), options, 'webhookUrl options');
    if (!this.webhooks) throw new NotSupportedError('this engine was built without a webhook listener');
    return this.webhooks.url(name, base);
  }

  /**
   * Serves one webhook delivery inside the app's own HTTP server, with the same checks and
   * answers as the engine's listener: the request's path must end in `/<workflow>/<secret>`
   * (the workflow's name or its trigger's `path`; the secret as in {@link Engine.webhookUrl},
   * compared in constant time). 404 for an unknown workflow or a wrong secret, 413 over
   * `webhook.bodyLimitBytes`, 415 for a body neither JSON nor a form, 400 when the trigger's
   * `validate` or the input schema refuses it (nothing stored), else 202 `{ runId, created }`;
   * an `Idempotency-Key` header makes a redelivery return the first run (`created: false`).
   * 503 before start() and after stop(). Set `webhook: { listen: false }` to open no port.
   * The body must be unread (route the hook before any body parser): ValidationError if not.
   *
   * A fetch API handler: a Next.js route handler or Hono returns it as is; Express and Fastify
   * reach it through `getRequestListener` of `@hono/node-server` (docs/recipes.md).
   *
   * @example
   * ```ts
   * // app/api/hooks/[workflow]/[secret]/route.ts in Next.js
   * export const POST = (request: Request) => engine.handleWebhook(request);
   * ```
   */
  async handleWebhook(request: Request): Promise<Response> {
    const r = request as Partial<Request> | null;
    if (typeof r?.url !== 'string' || typeof r.headers?.get !== 'function' || typeof r.method !== 'string') {
      throw new ValidationError('engine.handleWebhook: expected a fetch API Request');
    }
    // A body parser of the app's that ran first leaves nothing to check the delivery against.
    if (r.bodyUsed) throw new ValidationError('engine.handleWebhook: the request body was already read: route the hook before any body parser');
    if (!this.webhooks) throw new NotSupportedError('this engine was built without a webhook listener');
    return this.webhooks.handle(request);
  }

  /** Where the webhook listener listens, once started; undefined when it is not running. */
  get webhookAddress(): { host: string; port: number } | undefined {
    return this.webhooks?.address;
  }

  /** Starts a run, by workflow name or by its definition (then `input` is typed by it, and
   *  the runId types result()'s output). Input that fails the workflow's input schema is
   *  refused with nothing stored.
   *  For a debounced workflow (option `debounce`) the trigger joins its key's burst: `runId`
   *  is the run the burst becomes (the same for each of its triggers; result() waits for
   *  it), `created` says whether this trigger opened the burst, `debouncedUntil` when the run
   *  starts unless another trigger comes (docs/flow-control.md, Debounce). */
  async trigger<I, O>(workflow: WorkflowDefinition<I, O>, input: I, options?: TriggerOptions): Promise<{ runId: RunId<O>; created: boolean; debouncedUntil?: string }>;
  async trigger(workflow: string, input?: unknown, options?: TriggerOptions): Promise<{ runId: string; created: boolean; debouncedUntil?: string }>;
  async trigger(workflow: string | WorkflowDefinition, input: unknown = null, options: TriggerOptions = {}): Promise<{ runId: string; created: boolean; debouncedUntil?: string }> {
    const name = check(nameSchema(), isWorkflowDefinition(workflow) ? workflow.name : workflow, 'workflow');
    this.registry.get(name);
    // A workflow file changed on disk runs at its new version (blocked if its declaration changed).
    await this.files?.refresh(name);
    const opts = check(triggerOptionsSchema(), options, 'trigger options');
    const value = (await checkedInput(this.registry, name, input)).value;
    const data = jsonArg(value, `input of trigger('${name}')`, this.maxPayloadBytes);
    const def = this.registry.get(name).definition;
    const debounce = def.debounce;
    if (debounce) {
      // The key function sees the input as the run's code will (a Date, a Map: docs/values.md).
      const seen = decodeValue(data);
      return debouncedTrigger(this.executor, name, debounce, def.runs, seen, data, opts, this.newId, undefined);
    }
    const timeoutMs = opts.timeout === undefined ? undefined : runTimeoutMs(opts.timeout, 'trigger option timeout');
    const runId = opts.runId ?? this.newId();
    return tracedStart(this.telemetry, 'start', name, runId, undefined, (traceparent) => this.executor.startRun({ workflow: name, input: data, runId, traceparent, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }), (r) => r.created);
  }

  /** Publishes event `name`: starts a run of every workflow with an `event(name)` trigger,
   *  the payload as its input. `options.id` deduplicates: an id seen before starts nothing
   *  (`duplicate: true`, the first emit's run ids). */
  async emit(name: string, payload: unknown = null, options: { id?: string } = {}): Promise<EmitResult> {
    const event = check(nameSchema(), name, 'event name');
    const opts = check(emitOptionsSchema(), options, 'emit options');
    const data = jsonArg(payload, `payload of emit('${event}')`, this.maxPayloadBytes);
    await checkEventPayload(this.registry, event, payload);
    if (this.files) for (const w of this.registry.subscribers(event)) await this.files.refresh(w);
    const id = opts.id ?? this.newId();
    return tracedStart(this.telemetry, 'emit', event, id, undefined, (traceparent) => this.executor.emit({ name: event, payload: data, id, traceparent }), (r) => !r.duplicate);
  }

  /** Sends signal `name` to a run: its step.waitForEvent(name) resolves with `payload` (now,
   *  or when it gets there). Throws UnknownRunError for an unknown run and RunStateError for
   *  a run that already finished. */
  async signal(runId: string, name: string, payload: unknown = null): Promise<void> {
    const id = check(idSchema(), runId, 'runId');
    const signal = check(nameSchema(), name, 'signal name');
    // A wait's name is its signal's name, and step names cannot contain '#' (step-names.ts):
    // such a signal could never be taken.
    if (signal.includes(RESERVED_IN_NAMES)) throw new ValidationError(`signal name '${signal}' contains '#', which no waitForEvent name can (it is reserved for repeated step names)`);
    // A declared payload schema (workflow option `signals`): refused to the sender, nothing
    // stored, so the wait goes on waiting.
    const value = anySignalSchemas(this.registry) ? (await checkedSignal(this.registry, (await this.view(id)).workflow, id, signal, payload)).value : payload;
    return this.executor.signal(id, signal, jsonArg(value, `payload of signal('${signal}')`, this.maxPayloadBytes));
  }

  /** The run's final view with its input and output as the code gave them (a Map, a Date:
   *  docs/values.md); waits up to `timeout` (default: no limit), then throws TimeoutError.
   *  A run that failed resolves too: read `status` and `error`. */
  async result<O>(runId: RunId<O>, options?: { timeout?: Duration }): Promise<TypedRunView<O>>;
  async result(runId: string, options?: { timeout?: Duration }): Promise<RunView>;
  async result(runId: string, options: { timeout?: Duration } = {}): Promise<RunView> {
    const view = await this.storedResult(runId, options);
    if (isTaggedValue(view.output) || isTaggedValue(view.input)) return { ...view, input: decodeValue(view.input), output: decodeValue(view.output) };
    return view;
  }

  /** @internal result() with input and output in their stored form (JSON: what the serve's wire carries). */
  async storedResult(runId: string, options: { timeout?: Duration } = {}): Promise<RunView> {
    const id = check(idSchema(), runId, 'runId');
    const opts = check(resultOptionsSchema(), options, 'result options');
    // No timeout: as long as any duration may be (the executors' timers chain past 24.8 days).
    let timeoutMs = MAX_DURATION_MS;
    if (opts.timeout !== undefined) {
      try {
        timeoutMs = Math.max(0, parseDuration(opts.timeout, 'result timeout'));
      } catch (err) {
        throw new ValidationError((err as Error).message);
      }
    }
    return waitForRun(this.executor, id, timeoutMs);
  }

  /** runs.rerun: the finished run's input, stored form as is, under its workflow's current code. */
  private async rerun(id: string, opts: { runId?: string }): Promise<{ runId: string; created: boolean }> {
    const old = await this.view(id);
    if (!isTerminal(old.status)) throw new RunStateError(`run ${id} is ${old.status}; only a finished run (succeeded, failed or cancelled) can be rerun (to stop it first: runs.cancel)`);
    this.registry.get(old.workflow);
    await this.files?.refresh(old.workflow);
    return this.executor.startRun({ workflow: old.workflow, input: old.input, runId: opts.runId ?? this.newId(), rerunOf: id });
  }

  /** runs.fork: the original's recorded steps before the fork point, copied into the new run
   *  as it is written (domain/run-fork.ts says which). */
  private async fork(id: string, opts: ForkOptions): Promise<ForkResult> {
    if (opts.runId === id) throw new ValidationError(`runs.fork: the new run's id must not be the original's (${id})`);
    const old = await this.view(id);
    if (this.registry.get(old.workflow).file) {
      // A file's version is the snapshot its runs were created at, and a fork runs the
      // original's version: refused when that snapshot is gone (the retention of run data, or
      // removed by hand). The approval gate is the backend's, at execution, as for any run of
      // that version: a fork of a version whose declaration is not approved is blocked.
      // Refreshed so a version that is the file on disk now counts as kept; a file that no
      // longer describes does not stop a fork of an older version (it runs that one).
      const wf = (await this.files?.refresh(old.workflow).catch(() => undefined)) ?? this.registry.get(old.workflow);
      if (!this.files?.versionKept(wf, old.version)) throw new NotSupportedError(`runs.fork: run ${id} is of version ${old.version} of workflow file '${old.workflow}', whose snapshot is gone (a fork runs the original's version); rerun it instead, at the file's version now`);
    }
    const entries = (await this.executor.journal?.(id)) ?? entriesOfViews(old.steps);
    const plan = forkPlan(id, entries, opts.from, old.children ?? []);
    const started = await this.executor.startRun({ workflow: old.workflow, input: old.input, runId: opts.runId ?? this.newId(), rerunOf: id, fork: { ...plan, version: old.version } });
    return { ...started, from: plan.from, reused: plan.entries.map((e) => ({ seq: e.seq, name: e.name })) };
  }

  private async declaration(name: string): Promise<DeclarationView> {
    const wf = this.registry.get(name);
    if (!wf.file || !this.files) throw new ValidationError(`workflow '${name}' is not a workflow file: it needs no approval`);
    await this.files.refresh(name);
    const d = this.files.declared(name);
    const approvals = this.executor.approvals ? await this.executor.approvals(name) : [];
    const latest = approvals[0];
    const approved = approvals.some((a) => a.hash === d.hash);
    const view: DeclarationView = {
      ...d, approved, diff: approved ? { added: [], removed: [] } : declarationDiff(latest?.declaration, d.declaration), approveCommand: approveCommand(name),
    };
    if (latest) view.approvedHash = approved ? d.hash : latest.hash;
    return view;
  }

  private triggerState(): TriggerState {
    return this.executor.triggers;
  }

  private async explainSchedules(workflow: string): Promise<{ workflow: string; summary: string; details: string[] }> {
    this.registry.get(workflow);
    const t = this.triggerState();
    const schedules = (await t.listSchedules()).filter((s) => s.workflow === workflow && s.active);
    return explainSchedules(workflow, schedules, (await t.listSlots({ workflow, limit: 20 })).reverse());
  }

  private async view(runId: string): Promise<RunView> {
    const id = check(idSchema(), runId, 'runId');
    const v = await this.executor.getRun(id);
    if (!v) throw new UnknownRunError(id);
    return v;
  }
}
