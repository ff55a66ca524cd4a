// The authoring surface as types. Both backends implement StepApi and WorkflowContext;
// workflow code sees nothing else of the engine.
import type { Duration } from '../src/domain/duration.ts';
import type { Json } from '../src/domain/json.ts';
import type { Backoff } from '../src/domain/retry-policy.ts';
import type { QueueRef } from './queue.ts';

export type { Duration, Json, Backoff };

/** What a step body is called with: the attempt, the key to make its side effect idempotent,
 *  and the signal that aborts it. */
export interface StepInfo {
  /** 1 on the first attempt. */
  attempt: number;
  /** `<runId>/<stepName>`, `name#2` for a repeated name; the same on every attempt and replay. */
  idempotencyKey: string;
  /** Aborted when this attempt times out, the run is cancelled, or the engine stops (on
   *  Restate also when the invocation attempt running it ends, e.g. its node died): pass it
   *  on (`fetch(url, { signal })`, child processes) so work nobody will observe stops. Its
   *  `reason` says which. A result the body returns after the abort is ignored. */
  signal: AbortSignal;
  /** Lines for the run's log tagged with this step and attempt (and the attempt's trace and
   *  span ids when an OpenTelemetry SDK is registered): docs/observability.md, "Logs". */
  log: WorkflowLogger;
  /** A writer to the run's stream `name` from this attempt (docs/live-output.md, "From a step
   *  body"): each chunk reaches `runs.stream(..., { provisional: true })` readers in the
   *  executing process at once, and is committed with the step's result, so only the
   *  attempt that succeeds stores its chunks (a failed attempt's are discarded, its readers
   *  told to rewind). */
  stream(name: string): BodyStreamWriter;
}

/** info.stream(name)'s writer, inside a step body: nothing is journaled per chunk. */
export interface BodyStreamWriter {
  /** Appends `chunk` to this attempt's chunks (a value the value codec keeps; the chunks
   *  and the result together within the payload limit): sent live at once, stored with the
   *  step's result. Throws a ValidationError for a value it cannot keep, or once the attempt
   *  is over. */
  write(chunk: unknown): void;
}

/** Writes lines to the run's log (`ctx.log` in workflow code, `info.log` in a step body).
 *  Each line is one record carrying the run id, workflow, step and attempt, and the trace
 *  and span ids with an OpenTelemetry SDK registered; the engine config's `log` says where
 *  records go (default: stderr, level info; docs/observability.md, "Logs"). */
export interface WorkflowLogger {
  /** A line at level debug; `fields` are kept as structured data with it. */
  debug(message: string, fields?: Record<string, unknown>): void;
  /** A line at level info. */
  info(message: string, fields?: Record<string, unknown>): void;
  /** A line at level warn. */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** A line at level error. */
  error(message: string, fields?: Record<string, unknown>): void;
}

/** How a failing step is retried (`step.do(name, { retries }, fn)`, `w.defaults({ retries })`).
 *  Default: 3 attempts, exponential backoff from 1s with jitter. A TerminalError is never
 *  retried. */
export interface RetryOptions {
  /** Total attempts, the first included (NOT Cloudflare's `retries.limit`, which counts
   *  retries after the first: theirs `limit: 5` is our `limit: 6`; docs/values.md, Retry). */
  limit?: number;
  /** The same setting as `limit` (total attempts, the first included; DBOS's name): the name
   *  that cannot be misread. Both given must agree. */
  maxAttempts?: number;
  /** How the delay grows between attempts; default `'exponential'` (doubles each time). */
  backoff?: Backoff;
  /** A duration (grown by `backoff`), or a function of the attempt that failed (1: the first)
   *  and its error, returning the duration to wait (backoff and jitter then do not apply;
   *  `maxDelay` still caps it). */
  delay?: Duration | ((attempt: number, error: Error) => Duration);
  /** The longest wait between two attempts, whatever the backoff. */
  maxDelay?: Duration;
  /** Waits a random time between half the delay and the whole of it (default true), so
   *  many runs failing together do not retry together. */
  jitter?: boolean;
}

/** Options of one step (`step.do(name, options, fn)`); `w.defaults(options)` sets them for
 *  every step of a workflow. */
export interface StepOptions {
  /** How the step's body is retried when it throws; see RetryOptions. */
  retries?: RetryOptions;
  /** Bounds each attempt; a timed-out attempt counts as failed (TimeoutError). */
  timeout?: Duration;
  /** Flow control: the body holds a slot of this queue (sdk/queue.ts) only while it runs;
   *  a name refers to a queue the workflow declares (`workflow(name, { queues }, ...)`). */
  queue?: QueueRef;
  /** The queue's key for this call (a user, a tenant): the queue's `key` limits apply per key. */
  key?: string;
}

/** A step's body: runs at least once, its result (or error) is journaled and counts once. */
export type StepBody<T> = (info: StepInfo) => T | Promise<T>;

/** step.use options: the step.do options plus the affinity a provider must contain. */
export interface UseOptions extends StepOptions {
  /** Only a provider whose attributes include every key here with the same value serves
   *  the call (e.g. `{ partition: 'work' }`); none matching: the run is `parked`. */
  affinity?: Record<string, string | number | boolean>;
}

/** A child workflow: its definition (typed input and output) or its registered name. */
export type ChildWorkflow<I = any, O = any> = string | { readonly name: string; readonly fn: WorkflowFn<I, O> };

/** Options of `step.start` (and `step.invoke`): the child's run id and what cancelling the
 *  parent does to it. */
export interface StartChildOptions {
  /** The child's run id; default `<parent run id>:<step name>` (the same on every replay). */
  runId?: string;
  /** Cancelling this run cancels the child (`cancel`, default; the child's cleanup runs) or
   *  leaves it running (`abandon`). */
  onParentCancel?: 'cancel' | 'abandon';
}

/** Options of `step.invoke`: StartChildOptions plus how long to wait for the child's end. */
export interface InvokeOptions extends StartChildOptions {
  /** How long to wait for the child's end; past it the call throws TimeoutError (the child
   *  keeps running: cancel it with engine.runs.cancel if that is wanted). */
  timeout?: Duration;
}

/**
 * The durable operations of a run (`w.run(async ({ step }) => ...)`). Each call is a step
 * named by its first argument: its outcome is journaled, and a replay after a crash or
 * restart returns the recorded outcome instead of doing the work again. A name repeated in
 * one run becomes `name#2`, `name#3`, ...; a name may not contain `#` (ValidationError).
 *
 * @example
 * ```ts
 * const user = await step.do('fetch', async () => (await fetch(`https://api.example.com/users/${input.userId}`)).json());
 * await step.sleep('pause', '48h');
 * const reply = await step.waitForEvent('reply', { timeout: '7d' });
 * ```
 */
export interface StepApi {
  /** Runs `fn` as a journaled step and resolves with its result (a value the value codec
   *  keeps: docs/values.md). A body that throws is retried by `options.retries` (default 3
   *  attempts); when the attempts are spent, or it threw a TerminalError, the step rejects
   *  with that error. A replay returns the recorded result without calling `fn`. */
  do<T>(name: string, fn: StepBody<T>): Promise<T>;
  /** `step.do` with options: retries and a per-attempt timeout (TimeoutError). */
  do<T>(name: string, options: StepOptions, fn: StepBody<T>): Promise<T>;
  /** A durable timer: the run suspends (it holds no memory or process) and resumes after
   *  `duration` (ms or a string such as '30s', '48h', '7d'), across restarts. */
  sleep(name: string, duration: Duration): Promise<void>;
  /** A durable timer to a point in time (a Date or epoch ms); a past time resolves at once. */
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

/** Options of `ctx.emit`. */
export interface EmitOptions {
  /** Dedup id for the event; defaults to `<runId>/<step name>` so a replay never emits twice. */
  id?: string;
}

/** What a run knows about itself, and the deterministic stand-ins for the clock and random
 *  numbers that code between steps must use (it is replayed). */
export interface WorkflowContext {
  /** This run's id. */
  readonly runId: string;
  /** The name of this run's workflow. */
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
  /** Journaled: publishes `value` as this run's state under `key` (docs/live-output.md), for
   *  callers to read while the run goes on and after it ended (`engine.runs.state(runId, key)`,
   *  `tranquil runs state`). The latest publish of a key wins; a replay publishes nothing
   *  again. The value is any value the value codec keeps (a Map, a Date: docs/values.md),
   *  within the payload size limit; a key is 1-200 printable characters without `#`. */
  publish(key: string, value?: unknown): Promise<void>;
  /** A named stream of this run (docs/live-output.md): each `write(chunk)` is journaled once
   *  (a replay writes nothing again), and `engine.runs.stream(runId, name)` reads the chunks
   *  in order from any offset, live while the run goes on and after it ended, until `close()`
   *  or the run's end. Chunks are values the value codec keeps, within the payload limit. */
  stream(name: string): StreamWriter;
  /** Replay-aware: a line is written once per run, when the code first runs past it; the
   *  replays of that code (after a sleep, a wait, a retry, a restart) do not write it again.
   *  Not journaled, so lines cost no step. */
  readonly log: WorkflowLogger;
}

/** ctx.stream(name)'s writer, in workflow code (a step body writes with `info.stream(name)`). */
export interface StreamWriter {
  /** Journaled: appends `chunk` to the stream. Rejects after close(). */
  write(chunk: unknown): Promise<void>;
  /** Journaled: ends the stream; its readers end after the last chunk. */
  close(): Promise<void>;
}

/** The one argument of a workflow's run function. */
export interface RunArgs<I> {
  /** The run's input (the trigger's or event's payload; parsed by the input schema if any). */
  input: I;
  step: StepApi;
  ctx: WorkflowContext;
}

/** A workflow's run function (`w.run(fn)`): its return value is the run's output. */
export type WorkflowFn<I = any, O = any> = (args: RunArgs<I>) => Promise<O> | O;
