// The serve control channel's protocol (docs/host.md, "Talking to the service"): the
// serve.json that says where a running `tranquil serve` listens, the request frames (one
// zod-validated union), the answer envelope, and applyOp, which carries a request out on an
// Engine. The same code serves the CLI's mutating commands (over the channel or in-process)
// and the embedding app's attach() (compose/attach.ts).
import * as z from 'zod';
import type { Engine } from '../../runtime/engine.ts';
import { RUN_STATUSES } from '../../domain/run-status.ts';
import type { RunView } from '../../domain/run-view.ts';
import { attrsSchema, capabilityNameSchema } from '../../domain/capability.ts';
import { NotSupportedError } from '../../domain/errors.ts';
import { POLL_MAX_MS, type RemoteProviders } from './remote-providers.ts';
import { once } from '../../domain/once.ts';
import type { Json } from '../../domain/json.ts';
import { decodeValue, encodeValue } from '../../domain/value-codec.ts';
import { publishedState } from '../../domain/published-state.ts';
import { streamBatch } from './stream-batch.ts';
import type { RemoteSubscriptions } from './remote-subscriptions.ts';
import { STEP_EVENT_TYPES } from '../../runtime/step-events.ts';

export const SERVE_FILE = 'serve.json';

// Every schema here is built on first use (once): an engine that never serves the channel nor
// attaches never holds them (~270 zod schemas; docs/performance.md, "Idle memory").

/** Only loopback: the token never leaves the machine, and a planted file cannot send it away. */
export const serveFileSchema = once(() => z.object({
  pid: z.number().int().positive(),
  host: z.enum(['127.0.0.1', '::1']),
  port: z.number().int().min(1).max(65_535),
  token: z.string().min(32).max(200),
}).strict());
export type ServeInfo = z.infer<ReturnType<typeof serveFileSchema>>;

const json = () => z.unknown();
const id = () => z.string().min(1).max(200);
const name = () => z.string().min(1).max(200);

/** A request body over this size is refused before it is parsed (payloads are limited by the
 *  engine anyway; this bounds what an authenticated but broken client can make serve buffer). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** The longest one `result` request waits; a client wanting longer asks again. */
export const MAX_RESULT_WAIT_MS = 60_000;

export const opSchema = once(() => z.discriminatedUnion('op', [
  // Who answers: the serve's pid, backend, data dir and workflows (attach() checks this).
  z.object({ op: z.literal('hello') }).strict(),
  // The CLI's `tranquil run`: trigger, then wait up to waitMs for the run to settle.
  z.object({ op: z.literal('run'), workflow: name(), input: json(), runId: id().optional(), waitMs: z.number().int().min(0) }).strict(),
  z.object({ op: z.literal('trigger'), workflow: name(), input: json(), runId: id().optional() }).strict(),
  z.object({ op: z.literal('result'), runId: id(), timeoutMs: z.number().int().min(0).max(MAX_RESULT_WAIT_MS) }).strict(),
  z.object({ op: z.literal('get'), runId: id() }).strict(),
  z.object({
    op: z.literal('list'),
    // Validated again, exactly, by engine.runs.list.
    filter: z.object({ status: z.enum(RUN_STATUSES).optional(), workflow: name().optional(), limit: z.number().int().optional(), cursor: z.string().optional(), since: z.string().optional(), until: z.string().optional() }).strict(),
  }).strict(),
  z.object({ op: z.literal('explain'), runId: id() }).strict(),
  z.object({ op: z.literal('emit'), name: name(), data: json(), id: id().optional() }).strict(),
  z.object({ op: z.literal('signal'), runId: id(), name: name(), data: json() }).strict(),
  // `by`: who asks (recorded; `why` says it): `cli (<user>@<host>)` from the CLI.
  z.object({ op: z.literal('cancel'), runId: id(), by: z.string().min(1).max(200).optional() }).strict(),
  z.object({ op: z.literal('retry'), runId: id(), from: name().optional() }).strict(),
  // Run control (docs/control.md).
  z.object({ op: z.literal('rerun'), runId: id(), newRunId: id().optional() }).strict(),
  // Validated again, exactly, by engine.runs.fork: a step name or a position.
  z.object({ op: z.literal('fork'), runId: id(), from: z.union([name(), z.number().int().min(0)]), newRunId: id().optional() }).strict(),
  z.object({ op: z.literal('pause'), runId: id(), by: z.string().min(1).max(200).optional() }).strict(),
  z.object({ op: z.literal('resume'), runId: id() }).strict(),
  // Pause of a whole workflow (docs/control.md); validated again by engine.workflows.
  z.object({ op: z.literal('workflow-pause'), workflow: name(), by: z.string().min(1).max(200).optional() }).strict(),
  z.object({ op: z.literal('workflow-resume'), workflow: name(), held: z.enum(['run', 'skip']).optional() }).strict(),
  // A workflow file's name, or its absolute path; `hash`: approve only that declaration.
  z.object({ op: z.literal('approve'), workflow: z.string().min(1), hash: z.string().min(1).optional() }).strict(),
  z.object({ op: z.literal('gc'), dryRun: z.boolean() }).strict(),
  // Live output (docs/live-output.md). `state` with timeoutMs waits that long for the key;
  // `stream` answers the chunks from `from`, waiting up to waitMs for the first (stream-batch.ts).
  // Key and name are checked again, exactly, by engine.runs.
  z.object({ op: z.literal('state'), runId: id(), key: name(), timeoutMs: z.number().int().min(0).max(MAX_RESULT_WAIT_MS).optional() }).strict(),
  z.object({ op: z.literal('published'), runId: id() }).strict(),
  z.object({ op: z.literal('stream'), runId: id(), name: name(), from: z.number().int().min(0), waitMs: z.number().int().min(0).max(MAX_RESULT_WAIT_MS) }).strict(),
  // Capability providers that live in an attached app (remote-providers.ts).
  z.object({ op: z.literal('provide'), capability: capabilityNameSchema(), attrs: attrsSchema() }).strict(),
  z.object({ op: z.literal('poll'), providerId: id(), waitMs: z.number().int().min(0).max(POLL_MAX_MS) }).strict(),
  z.object({
    op: z.literal('answer'), providerId: id(), callId: id(),
    result: json().optional(),
    error: z.object({ name: z.string().min(1).max(200), message: z.string(), fields: z.record(z.string(), json()).optional() }).strict().optional(),
  }).strict(),
  z.object({ op: z.literal('withdraw'), providerId: id() }).strict(),
  // Step events of an attached app (remote-subscriptions.ts): subscribe, long-poll, end.
  z.object({ op: z.literal('subscribe'), runId: id().optional() }).strict(),
  z.object({ op: z.literal('events'), subscriptionId: id(), waitMs: z.number().int().min(0).max(POLL_MAX_MS) }).strict(),
  z.object({ op: z.literal('unsubscribe'), subscriptionId: id() }).strict(),
]));

export type Op = z.infer<ReturnType<typeof opSchema>>;

/** Every answer: a result, or the error as the engine threw it (name, message, fields). */
export const answerSchema = once(() => z.union([
  z.object({ result: json() }).strict(),
  z.object({ error: z.object({ name: z.string().min(1), message: z.string(), fields: z.record(z.string(), json()).optional(), cause: json().optional() }) }).strict(),
]));

// The results attach() hands the app, checked before they are trusted (loose: a RunView's
// full shape is the engine's; these are the fields a caller branches on).
const runViewSchema = () => z.looseObject({ runId: z.string(), workflow: z.string(), status: z.enum(RUN_STATUSES), steps: z.array(z.unknown()) });
export const resultSchemas = once(() => ({
  hello: z.object({ pid: z.number().int(), backend: z.string(), dataDir: z.string(), workflows: z.array(z.string()) }).strict(),
  trigger: z.object({ runId: z.string(), created: z.boolean() }).strict(),
  result: runViewSchema(),
  get: runViewSchema(),
  list: z.object({ runs: z.array(runViewSchema()), next: z.string().optional() }).strict(),
  explain: z.looseObject({ runId: z.string(), status: z.enum(RUN_STATUSES), summary: z.string(), details: z.array(z.string()), next: z.string() }),
  emit: z.object({ runIds: z.array(z.string()), duplicate: z.boolean() }).strict(),
  signal: z.object({ runId: z.string(), signal: z.string(), delivered: z.literal(true) }).strict(),
  cancel: z.object({ runId: z.string(), cancelled: z.literal(true) }).strict(),
  retry: z.looseObject({ runId: z.string(), discarded: z.array(z.unknown()) }),
  provide: z.object({ providerId: z.string() }).strict(),
  poll: z.object({
    calls: z.array(z.object({ callId: z.string(), input: json(), runId: z.string(), idempotencyKey: z.string(), attempt: z.number().int(), affinity: attrsSchema() }).strict()),
    aborted: z.array(z.string()),
  }).strict(),
  answer: z.object({ accepted: z.boolean() }).strict(),
  withdraw: z.object({ withdrawn: z.boolean() }).strict(),
  // Values in their stored form (attach() decodes them: a Map, a Date come back as given).
  state: z.discriminatedUnion('found', [z.object({ found: z.literal(false) }).strict(), z.object({ found: z.literal(true), value: json() }).strict()]),
  published: z.array(z.object({ key: z.string(), value: json(), publishedAt: z.string().optional(), step: z.string() }).strict()),
  stream: z.object({ chunks: z.array(json()), next: z.number().int().min(0), done: z.boolean() }).strict(),
  subscribe: z.object({ subscriptionId: z.string() }).strict(),
  // Loose: a StepEvent's optional fields are the engine's (step-events.ts).
  events: z.object({
    events: z.array(z.looseObject({ type: z.enum(STEP_EVENT_TYPES), runId: z.string(), workflow: z.string(), step: z.string(), kind: z.string(), at: z.number() })),
    missed: z.number().int().min(0),
  }).strict(),
  unsubscribe: z.object({ unsubscribed: z.boolean() }).strict(),
} as const));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the run leaves pending/running (finished, or suspended on time or a signal). */
async function settle(engine: Engine, runId: string, waitMs: number): Promise<RunView> {
  const end = Date.now() + waitMs;
  for (;;) {
    const v = await engine.runs.get(runId);
    if ((v.status !== 'pending' && v.status !== 'running') || Date.now() >= end) return v;
    await sleep(10);
  }
}

/** What only a serve has: its data dir (for hello) and the attached apps' providers and
 *  step-event subscriptions. */
export interface ServeContext {
  dataDir: string;
  providers: RemoteProviders;
  subscriptions: RemoteSubscriptions;
}

function served(ctx: ServeContext | undefined, op: string): ServeContext {
  if (!ctx) throw new NotSupportedError(`'${op}' is served only by a running tranquil serve`);
  return ctx;
}

/** Carries out one request on the engine; what it returns is the answer's `result`. */
export async function applyOp(engine: Engine, op: Op, ctx?: ServeContext): Promise<unknown> {
  switch (op.op) {
    case 'hello':
      return { pid: process.pid, backend: engine.backend, dataDir: ctx?.dataDir ?? '', workflows: engine.registry.all().map((w) => w.definition.name) };
    case 'run': {
      const started = await engine.trigger(op.workflow, decodeValue((op.input ?? null) as Json), op.runId ? { runId: op.runId } : {});
      const view = await settle(engine, started.runId, op.waitMs);
      return { ...started, status: view.status, output: view.output, error: view.error, wakeAt: view.wakeAt };
    }
    case 'trigger':
      return engine.trigger(op.workflow, decodeValue((op.input ?? null) as Json), op.runId ? { runId: op.runId } : {});
    case 'result':
      return engine.storedResult(op.runId, { timeout: op.timeoutMs });
    case 'get':
      return engine.runs.get(op.runId);
    case 'list': {
      const page = await engine.runs.list(op.filter);
      return page.next === undefined ? { runs: [...page] } : { runs: [...page], next: page.next };
    }
    case 'explain':
      return engine.runs.explain(op.runId);
    case 'emit':
      return engine.emit(op.name, decodeValue((op.data ?? null) as Json), op.id ? { id: op.id } : {});
    case 'signal':
      await engine.signal(op.runId, op.name, decodeValue((op.data ?? null) as Json));
      return { runId: op.runId, signal: op.name, delivered: true };
    case 'cancel':
      await engine.runs.cancel(op.runId, op.by === undefined ? {} : { by: op.by });
      return { runId: op.runId, cancelled: true };
    case 'retry': {
      const r = await engine.runs.retry(op.runId, op.from === undefined ? {} : { from: op.from });
      return { runId: op.runId, ...r };
    }
    case 'rerun':
      return { rerunOf: op.runId, ...(await engine.runs.rerun(op.runId, op.newRunId === undefined ? {} : { runId: op.newRunId })) };
    case 'fork':
      return { forkOf: op.runId, ...(await engine.runs.fork(op.runId, { from: op.from, ...(op.newRunId === undefined ? {} : { runId: op.newRunId }) })) };
    case 'pause':
      await engine.runs.pause(op.runId, op.by === undefined ? {} : { by: op.by });
      return { runId: op.runId, paused: true };
    case 'resume':
      return { runId: op.runId, ...(await engine.runs.resume(op.runId)) };
    case 'workflow-pause':
      return engine.workflows.pause(op.workflow, op.by === undefined ? {} : { by: op.by });
    case 'workflow-resume':
      return engine.workflows.resume(op.workflow, op.held === undefined ? {} : { held: op.held });
    case 'gc':
      return engine.gc({ dryRun: op.dryRun });
    case 'state': {
      // A published value is never undefined (the codec stores it as null): undefined is "none".
      const v = await engine.runs.state(op.runId, op.key, op.timeoutMs === undefined ? {} : { timeout: op.timeoutMs });
      return v === undefined ? { found: false } : { found: true, value: encodeValue(v, `state '${op.key}'`).stored };
    }
    case 'published':
      // The stored form as the journal holds it (no decode and encode again).
      return publishedState((await engine.runs.get(op.runId)).steps);
    case 'stream':
      return streamBatch(engine, op.runId, op.name, op.from, op.waitMs);
    case 'approve': {
      const byPath = engine.registry.all().find((w) => w.file?.path === op.workflow);
      const name = byPath?.definition.name ?? op.workflow;
      const r = await engine.workflows.approve(name, op.hash === undefined ? {} : { hash: op.hash });
      // The file's path: the CLI shows each granted path resolved against it (issue 36).
      const file = byPath?.file?.path ?? engine.registry.all().find((w) => w.definition.name === name)?.file?.path;
      return file === undefined ? r : { ...r, file };
    }
    case 'provide':
      return served(ctx, op.op).providers.provide(op.capability, op.attrs);
    case 'poll':
      return served(ctx, op.op).providers.poll(op.providerId, op.waitMs);
    case 'answer':
      return served(ctx, op.op).providers.answer(op.providerId, op.callId, op.error ? { error: op.error as never } : { result: op.result });
    case 'withdraw':
      return served(ctx, op.op).providers.withdraw(op.providerId);
    case 'subscribe':
      return served(ctx, op.op).subscriptions.subscribe(op.runId);
    case 'events':
      return served(ctx, op.op).subscriptions.events(op.subscriptionId, op.waitMs);
    case 'unsubscribe':
      return served(ctx, op.op).subscriptions.unsubscribe(op.subscriptionId);
  }
}
