// The authoring surface as types. Both backends implement StepApi and WorkflowContext;
// workflow code sees nothing else of the engine.
import type { Duration } from '../src/domain/duration.ts';
import type { Json } from '../src/domain/json.ts';
import type { Backoff } from '../src/domain/retry-policy.ts';

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
  /** Total attempts, the first included (NOT Cloudflare's `retries.limit`, which counts
   *  retries after the first: theirs `limit: 5` is our `limit: 6`; docs/values.md, Retry). */
  limit?: number;
  /** The same setting as `limit` (total attempts, the first included; DBOS's name): the name
   *  that cannot be misread. Both given must agree. */
  maxAttempts?: number;
  backoff?: Backoff;
  /** A duration (grown by `backoff`), or a function of the attempt that failed (1: the first)
   *  and its error, returning the duration to wait (backoff and jitter then do not apply;
   *  `maxDelay` still caps it). */
  delay?: Duration | ((attempt: number, error: Error) => Duration);
  maxDelay?: Duration;
  jitter?: boolean;
}

export interface StepOptions {
  retries?: RetryOptions;
  /** Bounds each attempt; a timed-out attempt counts as failed (TimeoutError). */
  timeout?: Duration;
}

export type StepBody<T> = (info: StepInfo) => T | Promise<T>;

/** step.use options: the step.do options plus the affinity a provider must contain. */
export interface UseOptions extends StepOptions {
  /** Only a provider whose attributes include every key here with the same value serves
   *  the call (e.g. `{ partition: 'work' }`); none matching: the run is `parked`. */
  affinity?: Record<string, string | number | boolean>;
}

/** A child workflow: its definition (typed input and output) or its registered name. */
export type ChildWorkflow<I = any, O = any> = string | { readonly name: string; readonly fn: WorkflowFn<I, O> };

export interface StartChildOptions {
  /** The child's run id; default `<parent run id>:<step name>` (the same on every replay). */
  runId?: string;
  /** Cancelling this run cancels the child (`cancel`, default; the child's cleanup runs) or
   *  leaves it running (`abandon`). */
  onParentCancel?: 'cancel' | 'abandon';
}

export interface InvokeOptions extends StartChildOptions {
  /** How long to wait for the child's end; past it the call throws TimeoutError (the child
   *  keeps running: cancel it with engine.runs.cancel if that is wanted). */
  timeout?: Duration;
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
  /** Starts a run of `child` and waits for its end (docs/children.md): its output; a child
   *  that failed or was cancelled throws ChildRunError (its error as `cause`), a child still
   *  running after `timeout` throws TimeoutError. Exactly one child run per call, also across
   *  crashes, replays and retries. While it waits the run suspends like waitForEvent. */
  invoke<O = Json, I = any>(name: string, child: ChildWorkflow<I, O>, input?: I, options?: InvokeOptions): Promise<O>;
  /** Starts a run of `child` without waiting: its run id (await it later with step.result). */
  start<I = any>(name: string, child: ChildWorkflow<I, any>, input?: I, options?: StartChildOptions): Promise<string>;
  /** Waits for the end of a child run this run started (step.start's run id), as invoke does. */
  result<O = Json>(childRunId: string, options?: { timeout?: Duration }): Promise<O>;
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
  /** Journaled: publishes an event to the engine's inbox once per run. The payload is any
   *  value the value codec keeps (docs/values.md); one it cannot keep rejects this call. */
  emit(name: string, payload?: unknown, options?: EmitOptions): Promise<void>;
  /** Journaled: sends signal `name` to run `runId` once (a child telling its parent, a
   *  parent telling a child); that run's step.waitForEvent(name) takes it. */
  signal(runId: string, name: string, payload?: unknown): Promise<void>;
}

export interface RunArgs<I> {
  input: I;
  step: StepApi;
  ctx: WorkflowContext;
}

export type WorkflowFn<I = any, O = any> = (args: RunArgs<I>) => Promise<O> | O;
