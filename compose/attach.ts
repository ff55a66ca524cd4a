// attach({ dataDir }): the embedding app's handle on the engine a running `tranquil serve`
// (e.g. the OS service, docs/host.md) owns. One engine owns a data dir at a time (the owner
// lease), so an app that finds the service there talks to it instead of opening the file:
// every call is one request over the serve's control channel (src/adapters/http/
// control-protocol.ts: loopback, a 0600 token file, zod frames) carried out by the service's
// own Engine, so the rules are the engine's, and errors come back as their own classes.
// serve.json is read again on every call, so the handle follows a service that restarted
// (new port, new token); while none runs, calls fail with BackendUnavailableError.
import { BackendUnavailableError, SerializationError, StorageError, TimeoutError, toErrorInfo, ValidationError } from '../src/domain/errors.ts';
import { attrsSchema, capabilityNameSchema, type Attrs } from '../src/domain/capability.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import type { CapabilityHandler } from '../src/runtime/capabilities.ts';
import { MAX_DURATION_MS, parseDuration, type Duration } from '../src/domain/duration.ts';
import type { Explanation } from '../src/domain/explain.ts';
import type { RetryOptions, RetryResult } from '../src/domain/retry-point.ts';
import type { RunFilter, RunView } from '../src/domain/run-view.ts';
import type { EmitResult } from '../src/ports/executor.ts';
import type { RunList } from '../src/runtime/engine.ts';
import { checked, findServe, readServeFile, sendOp } from '../src/adapters/http/control-client.ts';
import { resultSchemas, type Op } from '../src/adapters/http/control-protocol.ts';
import { POLL_MAX_MS } from '../src/adapters/http/remote-providers.ts';
import { resolve } from 'node:path';
import { decodeValue, encodeValue } from '../src/domain/value-codec.ts';
import { checkStateKey, type PublishedValue } from '../src/domain/published-state.ts';
import { streamOptionsSchema, subscribeOptionsSchema, type StreamItem } from '../src/runtime/live-output.ts';
import { provisionalStream } from './attach-provisional.ts';
import type { StepEvent, StepEventHandler } from '../src/runtime/step-events.ts';
import type { Json } from '../src/domain/json.ts';

/** A value in its stored form for the wire (the serve decodes it), refused as the engine would. */
function wireValue(value: unknown, what: string): unknown {
  try {
    return encodeValue(value, what).stored;
  } catch (err) {
    throw new ValidationError((err as Error).message);
  }
}

/** A running service found in a data dir: its pid and loopback control address. */
export interface ServiceAddress {
  pid: number;
  host: string;
  port: number;
}

/** The service that owns `dataDir` now, or undefined. Only a serve.json owned by this user,
 *  mode 0600, on loopback, whose pid is alive, counts. */
export function findService(dataDir: string): ServiceAddress | undefined {
  const info = findServe(resolve(dataDir));
  return info && { pid: info.pid, host: info.host, port: info.port };
}

/** attach()'s options. */
export interface AttachOptions {
  /** The data dir of the service (`tranquil serve`, or an engine with `control: true`). */
  dataDir: string;
}

/** What an app does with a service's engine: the same calls, names and errors as `Engine`. */
export interface ServiceClient {
  /** The data dir, absolute. */
  readonly dataDir: string;
  /** The serve's pid when attach() answered. */
  readonly pid: number;
  readonly backend: string;
  /** The workflows the service has registered, by name. */
  readonly workflows: readonly string[];
  trigger(workflow: string, input?: unknown, options?: { runId?: string }): Promise<{ runId: string; created: boolean }>;
  /** The run's final view; waits up to `timeout` (default: without bound) in requests of at
   *  most a minute each. TimeoutError when it does not finish in time. */
  result(runId: string, options?: { timeout?: Duration }): Promise<RunView>;
  signal(runId: string, name: string, payload?: unknown): Promise<void>;
  emit(name: string, payload?: unknown, options?: { id?: string }): Promise<EmitResult>;
  readonly runs: {
    get(runId: string): Promise<RunView>;
    list(filter?: RunFilter): Promise<RunList>;
    /** `options.by`: who asks, recorded and said by `why` (default: the service's 'api'). */
    cancel(runId: string, options?: { by?: string }): Promise<void>;
    retry(runId: string, options?: RetryOptions): Promise<RetryResult>;
    explain(runId: string): Promise<Explanation>;
    /** As engine.runs.state (docs/live-output.md): the latest value the run published under
     *  `key` (decoded: a Map, a Date come back as given), undefined when none; with `timeout`,
     *  waits that long for a key not published yet (TimeoutError after it), in requests of
     *  at most a minute each; a run that ends without it answers undefined. */
    state<T = unknown>(runId: string, key: string, options?: { timeout?: Duration }): Promise<T | undefined>;
    /** As engine.runs.published: every key with its latest value (decoded). */
    published(runId: string): Promise<PublishedValue[]>;
    /** As engine.runs.stream: the chunks of the run's stream `name` from offset `from`
     *  (default 0), decoded, in order: what is there, then live as the run writes more (each
     *  request waits up to STREAM_WAIT_MS for the next chunk, and asks again); it ends once
     *  the stream is closed or the run has ended. It follows a service that restarts. */
    stream<T = unknown>(runId: string, name: string, options?: { from?: number; provisional?: false }): AsyncIterable<T>;
    /** As engine.runs.stream with `provisional: true`: a step body's chunks as it writes them,
     *  items `{ offset, chunk, provisional? }` and `{ rewind }`, from the service's step events
     *  (a body running in the service's process, or on Restate on any replica); a reader that
     *  starts in the middle of an attempt gets that attempt's chunks once stored. */
    stream<T = unknown>(runId: string, name: string, options: { from?: number; provisional: true }): AsyncIterable<StreamItem<T>>;
    /** As engine.runs.subscribe, from this process: the step events of run `options.runId`,
     *  or of every run, that the service executes, in order, from the subscription on (the
     *  handle long-polls for them). Resolves once the service has subscribed; the returned
     *  function ends it. A handler that throws gets the next event (the throw is a process
     *  warning). Events the service dropped because this process did not poll in time, or
     *  that came while the service restarted (the handle subscribes again), are not seen:
     *  the journal (runs.get) is the record. */
    subscribe(handler: StepEventHandler, options?: { runId?: string }): Promise<() => void>;
  };
  readonly capabilities: {
    /** Registers a provider whose handler runs HERE, in the app, for runs of the service's
     *  engine (docs/host.md, "Providers from an attached app"). Resolves once the service has
     *  registered it (parked runs it matches resume then); the returned function withdraws it.
     *  If the service restarts, the provider is registered again with the new one. */
    provide(capability: string, attrs: Attrs, handler: CapabilityHandler): Promise<() => void>;
    /** The providers this handle has registered. */
    list(): { capability: string; attrs: Attrs }[];
  };
  /** Whether a service still owns the data dir (its serve.json names a live pid). */
  connected(): boolean;
  /** Withdraws this handle's providers and ends its step-event subscriptions, and stops
   *  polling for them (the handle keeps the process alive while it has any). Other calls
   *  keep working. */
  close(): Promise<void>;
}

/** One poll for provider calls waits at most this long (under the serve's lease). */
const POLL_WAIT_MS = Math.min(10_000, POLL_MAX_MS);
/** After the service did not answer, the next try to register again. */
const REPROVIDE_PAUSE_MS = 1_000;
/** How often an answer is sent while the service does not answer, a second apart. */
const ANSWER_TRIES = 5;

interface Subscription {
  handler: StepEventHandler;
  runId: string | undefined;
  subscriptionId: string | undefined;
  stopped: boolean;
  polling: AbortController;
}

interface Provision {
  capability: string;
  attrs: Attrs;
  handler: CapabilityHandler;
  providerId: string | undefined;
  stopped: boolean;
  running: Map<string, AbortController>;
  /** Ends the poll under way when the provider is withdrawn. */
  polling: AbortController;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request of a result() or state() wait: under the serve's one-minute bound. */
const RESULT_SLICE_MS = 30_000;
/** One request of a stream reader waits this long for the next chunk, then asks again. */
export const STREAM_WAIT_MS = 25_000;

/** A caller's timeout in ms (a one-line ValidationError naming `what` when bad); no bound
 *  when absent. */
function timeoutOf(timeout: Duration | undefined, what: string): number {
  if (timeout === undefined) return MAX_DURATION_MS;
  try {
    return Math.max(0, parseDuration(timeout, what));
  } catch (err) {
    throw new ValidationError((err as Error).message);
  }
}

/** Connects to the service that owns `dataDir`. BackendUnavailableError when none runs;
 *  StorageError when a serve.json is there but cannot be trusted (says why). */
export async function attach(options: AttachOptions): Promise<ServiceClient> {
  if (typeof options?.dataDir !== 'string' || options.dataDir === '') throw new ValidationError('attach: dataDir: expected a non-empty string');
  const dataDir = resolve(options.dataDir);
  const send = async (op: Op, signal?: AbortSignal): Promise<unknown> => {
    const info = findServe(dataDir);
    if (!info) {
      const file = readServeFile(dataDir);
      if (file && 'refused' in file) throw new StorageError(`attach: ${file.refused}`);
      throw new BackendUnavailableError(`attach: no tranquil serve (nor an engine with control: true) owns ${dataDir} (no live serve.json there)`);
    }
    return sendOp(info, op, signal);
  };
  const hello = checked(resultSchemas().hello, await send({ op: 'hello' }), 'hello');
  const provisions = new Set<Provision>();

  const register = async (p: Provision) => {
    p.providerId = checked(resultSchemas().provide, await send({ op: 'provide', capability: p.capability, attrs: { ...p.attrs } }), 'capabilities.provide').providerId;
  };

  /** Runs one call in this process and sends the answer to the provider it came through. */
  const serveCall = async (p: Provision, providerId: string, call: { callId: string; input: unknown; runId: string; idempotencyKey: string; attempt: number; affinity: Attrs }) => {
    const abort = new AbortController();
    p.running.set(call.callId, abort);
    let answer: { result?: unknown; error?: { name: string; message: string; fields?: Record<string, unknown> } };
    try {
      const result = await p.handler(call.input as never, { runId: call.runId, idempotencyKey: call.idempotencyKey, attempt: call.attempt, affinity: call.affinity, signal: abort.signal });
      if (result !== undefined) JSON.stringify(result);
      answer = result === undefined ? {} : { result };
    } catch (err) {
      const e = err instanceof TypeError && /BigInt|circular/i.test(err.message) ? new SerializationError(`capability '${p.capability}': the provider's result is not JSON (${err.message})`) : err;
      const { name, message, fields } = toErrorInfo(e);
      answer = { error: fields ? { name, message, fields } : { name, message } };
    } finally {
      p.running.delete(call.callId);
    }
    // Sent again while the service does not answer (a blip); a service that is gone for good
    // recovers on its side (a restarted serve replays the step; a dropped provider parks it).
    const frame = { op: 'answer', providerId, callId: call.callId, ...(answer as object) } as Op;
    for (let attempt = 1; ; attempt++) {
      try {
        await send(frame);
        return;
      } catch (err) {
        if (!(err instanceof BackendUnavailableError) || attempt >= ANSWER_TRIES) return;
        await sleep(REPROVIDE_PAUSE_MS);
      }
    }
  };

  const pollLoop = async (p: Provision) => {
    while (!p.stopped) {
      try {
        if (p.providerId === undefined) await register(p);
        const providerId = p.providerId!;
        const got = checked(resultSchemas().poll, await send({ op: 'poll', providerId, waitMs: POLL_WAIT_MS }, p.polling.signal), 'poll');
        for (const id of got.aborted) p.running.get(id)?.abort(new Error('the engine aborted this call (timeout, cancel or stop)'));
        for (const call of got.calls) void serveCall(p, providerId, call);
      } catch {
        if (p.stopped) return;
        // The service restarted (it no longer knows this provider) or is away: withdraw the
        // old registration if it is still there, then register again.
        const old = p.providerId;
        p.providerId = undefined;
        if (old !== undefined) await send({ op: 'withdraw', providerId: old }).catch(() => {});
        await sleep(REPROVIDE_PAUSE_MS);
      }
    }
  };

  const subscriptions = new Set<Subscription>();
  const subscribeFrame = (s: Subscription): Op => ({ op: 'subscribe', ...(s.runId === undefined ? {} : { runId: s.runId }) });
  const deliver = (s: Subscription, e: StepEvent) => {
    const warn = (err: unknown) => process.emitWarning(`runs.subscribe: the handler threw on ${e.type} of run ${e.runId}: ${(err as Error)?.message ?? String(err)}`);
    try {
      const r = s.handler(e);
      if (r && typeof (r as Promise<void>).catch === 'function') (r as Promise<void>).catch(warn);
    } catch (err) {
      warn(err);
    }
  };
  const eventLoop = async (s: Subscription) => {
    while (!s.stopped) {
      try {
        s.subscriptionId ??= checked(resultSchemas().subscribe, await send(subscribeFrame(s)), 'runs.subscribe').subscriptionId;
        const got = checked(resultSchemas().events, await send({ op: 'events', subscriptionId: s.subscriptionId, waitMs: POLL_WAIT_MS }, s.polling.signal), 'runs.subscribe events');
        if (got.missed > 0) process.emitWarning(`runs.subscribe: the service dropped ${got.missed} step events this process did not poll in time`);
        for (const e of got.events) deliver(s, e as unknown as StepEvent);
      } catch {
        if (s.stopped) return;
        // The service restarted (it no longer knows this subscription) or is away: subscribe again.
        s.subscriptionId = undefined;
        await sleep(REPROVIDE_PAUSE_MS);
      }
    }
  };
  const unsubscribe = async (s: Subscription) => {
    if (s.stopped) return;
    s.stopped = true;
    s.polling.abort();
    subscriptions.delete(s);
    if (s.subscriptionId !== undefined) await send({ op: 'unsubscribe', subscriptionId: s.subscriptionId }).catch(() => {});
  };

  const stop = async (p: Provision) => {
    if (p.stopped) return;
    p.stopped = true;
    p.polling.abort();
    provisions.delete(p);
    if (p.providerId !== undefined) await send({ op: 'withdraw', providerId: p.providerId }).catch(() => {});
  };

  const client: ServiceClient = {
    dataDir,
    pid: hello.pid,
    backend: hello.backend,
    workflows: hello.workflows,
    trigger: async (workflow, input = null, opts = {}) =>
      checked(resultSchemas().trigger, await send({ op: 'trigger', workflow, input: wireValue(input, `input of trigger('${workflow}')`), ...(opts.runId === undefined ? {} : { runId: opts.runId }) }), 'trigger'),
    result: async (runId, opts = {}) => {
      const totalMs = timeoutOf(opts.timeout, 'result timeout');
      const end = Date.now() + totalMs;
      for (;;) {
        const slice = Math.max(0, Math.min(RESULT_SLICE_MS, end - Date.now()));
        try {
          const view = checked(resultSchemas().result, await send({ op: 'result', runId, timeoutMs: slice }), 'result') as unknown as RunView;
          return { ...view, input: decodeValue(view.input), output: decodeValue(view.output) };
        } catch (err) {
          if (!(err instanceof TimeoutError)) throw err;
          if (Date.now() >= end) throw new TimeoutError(`run ${runId} did not finish within ${totalMs}ms`);
        }
      }
    },
    signal: async (runId, name, payload = null) => {
      checked(resultSchemas().signal, await send({ op: 'signal', runId, name, data: wireValue(payload, `payload of signal('${name}')`) }), 'signal');
    },
    emit: async (name, payload = null, opts = {}) =>
      checked(resultSchemas().emit, await send({ op: 'emit', name, data: wireValue(payload, `payload of emit('${name}')`), ...(opts.id === undefined ? {} : { id: opts.id }) }), 'emit'),
    runs: {
      subscribe: async (handler, opts = {}) => {
        if (typeof handler !== 'function') throw new ValidationError('runs.subscribe: handler must be a function');
        const runId = parseOrThrow(subscribeOptionsSchema(), opts, 'runs.subscribe options').runId;
        const s: Subscription = { handler, runId, subscriptionId: undefined, stopped: false, polling: new AbortController() };
        // The first subscribe answers here: a bad run id is this call's error.
        s.subscriptionId = checked(resultSchemas().subscribe, await send(subscribeFrame(s)), 'runs.subscribe').subscriptionId;
        subscriptions.add(s);
        void eventLoop(s);
        return () => void unsubscribe(s);
      },
      get: async (runId) => checked(resultSchemas().get, await send({ op: 'get', runId }), 'runs.get') as unknown as RunView,
      list: async (filter = {}) => {
        const page = checked(resultSchemas().list, await send({ op: 'list', filter: filter as Extract<Op, { op: 'list' }>['filter'] }), 'runs.list');
        // The same shape as engine.runs.list: an array with a non-enumerable `next`.
        const list = page.runs as unknown as RunList;
        if (page.next !== undefined) Object.defineProperty(list, 'next', { value: page.next, enumerable: false });
        return list;
      },
      cancel: async (runId, opts = {}) => {
        checked(resultSchemas().cancel, await send({ op: 'cancel', runId, ...(opts.by === undefined ? {} : { by: opts.by }) }), 'runs.cancel');
      },
      retry: async (runId, opts = {}) => {
        const { runId: _id, ...r } = checked(resultSchemas().retry, await send({ op: 'retry', runId, ...(opts.from === undefined ? {} : { from: opts.from }) }), 'runs.retry');
        return r as unknown as RetryResult;
      },
      explain: async (runId) => checked(resultSchemas().explain, await send({ op: 'explain', runId }), 'runs.explain') as unknown as Explanation,
      state: async <T>(runId: string, key: string, opts: { timeout?: Duration } = {}): Promise<T | undefined> => {
        const ask = async (timeoutMs?: number) => {
          const r = checked(resultSchemas().state, await send({ op: 'state', runId, key, ...(timeoutMs === undefined ? {} : { timeoutMs }) }), 'runs.state');
          return r.found ? decodeValue<T>(r.value as Json) : undefined;
        };
        if (opts.timeout === undefined) return ask();
        const totalMs = timeoutOf(opts.timeout, 'runs.state timeout');
        const end = Date.now() + totalMs;
        for (;;) {
          try {
            return await ask(Math.max(0, Math.min(RESULT_SLICE_MS, end - Date.now())));
          } catch (err) {
            if (!(err instanceof TimeoutError)) throw err;
            if (Date.now() >= end) throw new TimeoutError(`run ${runId} published no '${key}' within ${totalMs}ms`);
          }
        }
      },
      published: async (runId) => checked(resultSchemas().published, await send({ op: 'published', runId }), 'runs.published').map((p) => ({ ...p, value: decodeValue(p.value as Json) })),
      stream: <T>(runId: string, name: string, opts: { from?: number; provisional?: boolean } = {}): AsyncIterable<T> => {
        // Checked here, at the call, as engine.runs.stream does; the run id by the serve.
        const n = checkStateKey(name, 'runs.stream name');
        const parsed = parseOrThrow(streamOptionsSchema(), opts, 'runs.stream options');
        // A body's chunks as written: from the service's step events (attach-provisional.ts).
        if (parsed.provisional) return provisionalStream(client.runs, runId, n, parsed.from ?? 0) as AsyncIterable<never>;
        let next = parsed.from ?? 0;
        return {
          async *[Symbol.asyncIterator]() {
            for (let failed = 0; ;) {
              let r;
              try {
                r = checked(resultSchemas().stream, await send({ op: 'stream', runId, name: n, from: next, waitMs: STREAM_WAIT_MS }), 'runs.stream');
                failed = 0;
              } catch (err) {
                // A blip or a restarting service: asked again from the same offset.
                if (!(err instanceof BackendUnavailableError) || ++failed >= ANSWER_TRIES) throw err;
                await sleep(REPROVIDE_PAUSE_MS);
                continue;
              }
              for (const c of r.chunks) {
                next++;
                yield decodeValue<T>(c as Json);
              }
              if (r.done) return;
            }
          },
        };
      },
    },
    capabilities: {
      provide: async (capability, attrs, handler) => {
        const name = parseOrThrow(capabilityNameSchema(), capability, 'capability name');
        const a = parseOrThrow(attrsSchema(), attrs ?? {}, `attributes of capability '${name}'`);
        if (typeof handler !== 'function') throw new ValidationError(`capabilities.provide('${name}'): handler must be a function`);
        const p: Provision = { capability: name, attrs: a, handler, providerId: undefined, stopped: false, running: new Map(), polling: new AbortController() };
        await register(p);
        provisions.add(p);
        void pollLoop(p);
        return () => void stop(p);
      },
      list: () => [...provisions].map((p) => ({ capability: p.capability, attrs: { ...p.attrs } })),
    },
    connected: () => findServe(dataDir) !== undefined,
    close: async () => {
      await Promise.all([...[...provisions].map(stop), ...[...subscriptions].map(unsubscribe)]);
    },
  };
  return client;
}
