// attach({ dataDir }): the embedding app's handle on the engine a running `tranquil serve`
// (e.g. the OS service, docs/host.md) owns. One engine owns a data dir at a time (the owner
// lease), so an app that finds the service there talks to it instead of opening the file:
// every call is one request over the serve's control channel (src/adapters/http/
// control-protocol.ts: loopback, a 0600 token file, zod frames) carried out by the service's
// own Engine, so the rules are the engine's, and errors come back as their own classes.
// serve.json is read again on every call, so the handle follows a service that restarted
// (new port, new token); while none runs, calls fail with BackendUnavailableError.
import { BackendUnavailableError, StorageError, TimeoutError, ValidationError } from '../src/domain/errors.ts';
import { MAX_DURATION_MS, parseDuration, type Duration } from '../src/domain/duration.ts';
import type { Explanation } from '../src/domain/explain.ts';
import type { RetryOptions, RetryResult } from '../src/domain/retry-point.ts';
import type { RunFilter, RunView } from '../src/domain/run-view.ts';
import type { EmitResult } from '../src/ports/executor.ts';
import type { RunList } from '../src/runtime/engine.ts';
import { checked, findServe, readServeFile, sendOp } from '../src/adapters/http/control-client.ts';
import { resultSchemas, type Op } from '../src/adapters/http/control-protocol.ts';
import { resolve } from 'node:path';

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

export interface AttachOptions {
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
    cancel(runId: string): Promise<void>;
    retry(runId: string, options?: RetryOptions): Promise<RetryResult>;
    explain(runId: string): Promise<Explanation>;
  };
  /** Whether a service still owns the data dir (its serve.json names a live pid). */
  connected(): boolean;
}

/** One request of a result() wait: under the serve's one-minute bound. */
const RESULT_SLICE_MS = 30_000;

/** Connects to the service that owns `dataDir`. BackendUnavailableError when none runs;
 *  StorageError when a serve.json is there but cannot be trusted (says why). */
export async function attach(options: AttachOptions): Promise<ServiceClient> {
  if (typeof options?.dataDir !== 'string' || options.dataDir === '') throw new ValidationError('attach: dataDir: expected a non-empty string');
  const dataDir = resolve(options.dataDir);
  const send = async (op: Op): Promise<unknown> => {
    const info = findServe(dataDir);
    if (!info) {
      const file = readServeFile(dataDir);
      if (file && 'refused' in file) throw new StorageError(`attach: ${file.refused}`);
      throw new BackendUnavailableError(`attach: no tranquil serve owns ${dataDir} (no live serve.json there)`);
    }
    return sendOp(info, op);
  };
  const hello = checked(resultSchemas.hello, await send({ op: 'hello' }), 'hello');

  const client: ServiceClient = {
    dataDir,
    pid: hello.pid,
    backend: hello.backend,
    workflows: hello.workflows,
    trigger: async (workflow, input = null, opts = {}) =>
      checked(resultSchemas.trigger, await send({ op: 'trigger', workflow, input, ...(opts.runId === undefined ? {} : { runId: opts.runId }) }), 'trigger'),
    result: async (runId, opts = {}) => {
      let totalMs = MAX_DURATION_MS;
      if (opts.timeout !== undefined) {
        try {
          totalMs = Math.max(0, parseDuration(opts.timeout, 'result timeout'));
        } catch (err) {
          throw new ValidationError((err as Error).message);
        }
      }
      const end = Date.now() + totalMs;
      for (;;) {
        const slice = Math.max(0, Math.min(RESULT_SLICE_MS, end - Date.now()));
        try {
          return checked(resultSchemas.result, await send({ op: 'result', runId, timeoutMs: slice }), 'result') as unknown as RunView;
        } catch (err) {
          if (!(err instanceof TimeoutError)) throw err;
          if (Date.now() >= end) throw new TimeoutError(`run ${runId} did not finish within ${totalMs}ms`);
        }
      }
    },
    signal: async (runId, name, payload = null) => {
      checked(resultSchemas.signal, await send({ op: 'signal', runId, name, data: payload }), 'signal');
    },
    emit: async (name, payload = null, opts = {}) =>
      checked(resultSchemas.emit, await send({ op: 'emit', name, data: payload, ...(opts.id === undefined ? {} : { id: opts.id }) }), 'emit'),
    runs: {
      get: async (runId) => checked(resultSchemas.get, await send({ op: 'get', runId }), 'runs.get') as unknown as RunView,
      list: async (filter = {}) => {
        const page = checked(resultSchemas.list, await send({ op: 'list', filter: filter as Extract<Op, { op: 'list' }>['filter'] }), 'runs.list');
        // The same shape as engine.runs.list: an array with a non-enumerable `next`.
        const list = page.runs as unknown as RunList;
        if (page.next !== undefined) Object.defineProperty(list, 'next', { value: page.next, enumerable: false });
        return list;
      },
      cancel: async (runId) => {
        checked(resultSchemas.cancel, await send({ op: 'cancel', runId }), 'runs.cancel');
      },
      retry: async (runId, opts = {}) => {
        const { runId: _id, ...r } = checked(resultSchemas.retry, await send({ op: 'retry', runId, ...(opts.from === undefined ? {} : { from: opts.from }) }), 'runs.retry');
        return r as unknown as RetryResult;
      },
      explain: async (runId) => checked(resultSchemas.explain, await send({ op: 'explain', runId }), 'runs.explain') as unknown as Explanation,
    },
    connected: () => findServe(dataDir) !== undefined,
  };
  return client;
}
