// The authoring surface as types. Both backends implement StepApi and WorkflowContext;
// workflow code sees nothing else of the engine.
import type { Duration } from '../src/domain/duration.ts';
import type { Json } from '../src/domain/json.ts';
import type { Backoff } from '../src/domain/retry-policy.ts';
import type { QueueRef } from './queue.ts';

export type { Duration, Json, Backoff };

export interface StepInfo {
  /** 1 on the first attempt. */
  attempt: number;
  /** `<runId>/<stepName>`, `name#2` for a repeated name; the same on every attempt and replay. */
  idempotencyKey: string;
  /** Aborted when this attempt times out, the run is cancelled, or the engine stops: pass it
   *  on (`fetch(url, { signal })`, child processes) so work nobody will observe stops. Its
   *  `reason` says which. A result the body returns after the abort is ignored. */
  signal: AbortSignal;
}

export interface RetryOptions {
  /** Total attempts, the first included. */
  limit?: number;
  backoff?: Backoff;
  delay?: Duration;
  maxDelay?: Duration;
  jitter?: boolean;
}

export interface StepOptions {
  retries?: RetryOptions;
  /** Bounds each attempt; a timed-out attempt counts as failed (TimeoutError). */
  timeout?: Duration;
  /** Flow control: the body holds a slot of this queue (sdk/queue.ts) only while it runs;
   *  a name refers to a queue the workflow declares (`workflow(name, { queues }, ...)`). */
  queue?: QueueRef;
  /** The queue's key for this call (a user, a tenant): the queue's `key` limits apply per key. */
  key?: string;
}

export type StepBody<T> = (info: StepInfo) => T | Promise<T>;

/** step.use options: the step.do options plus the affinity a provider must contain. */
export interface UseOptions extends StepOptions {
  /** Only a provider whose attributes include every key here with the same value serves
   *  the call (e.g. `{ partition: 'work' }`); none matching: the run is `parked`. */
  affinity?: Record<string, string | number | boolean>;
}

export interface StepApi {
  do<T>(name: string, fn: StepBody<T>): Promise<T>;
  do<T>(name: string, options: StepOptions, fn: StepBody<T>): Promise<T>;
  sleep(name: string, duration: Duration): Promise<void>;
  sleepUntil(name: string, at: Date | number): Promise<void>;
  /** Resolves with the payload of engine.signal(runId, name, payload); TimeoutError after `timeout`. */
  waitForEvent<T = Json>(name: string, options?: { timeout?: Duration }): Promise<T>;
  /** Work only the embedding host can do: calls a provider registered with
   *  `engine.capabilities.provide(capability, attrs, handler)` and journals its result like
   *  step.do (retries, timeout, idempotency key). With no eligible provider the run is
   *  `parked` until one is provided (docs/host.md). The step is named after the capability. */
  use<T = Json>(capability: string, input?: Json, options?: UseOptions): Promise<T>;
}

export interface EmitOptions {
  /** Dedup id for the event; defaults to `<runId>/<step name>` so a replay never emits twice. */
  id?: string;
}

export interface WorkflowContext {
  readonly runId: string;
  readonly workflow: string;
  /** Journaled: a replay sees the recorded value. */
  now(): number;
  /** Journaled: a replay sees the recorded value. */
  random(): number;
  /** Journaled: publishes an event to the engine's inbox once per run. */
  emit(name: string, payload?: Json, options?: EmitOptions): Promise<void>;
}

export interface RunArgs<I> {
  input: I;
  step: StepApi;
  ctx: WorkflowContext;
}

export type WorkflowFn<I = any, O = any> = (args: RunArgs<I>) => Promise<O> | O;
