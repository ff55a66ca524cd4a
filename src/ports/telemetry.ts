// Telemetry: what the engine tells an observer about its runs (docs/observability.md). The
// RunSession and the engine facade call it; the OpenTelemetry adapter (src/adapters/otel/)
// turns the calls into spans and metrics through @opentelemetry/api. Every method may return
// undefined ("nobody is listening"): the caller then does nothing more, so with no SDK
// registered the step path builds no object for telemetry.
import type { ErrorInfo } from '../domain/errors.ts';
import type { StepKind } from '../domain/run-view.ts';

/** A run (or an event that starts runs) is being created: `traceparent` is the W3C trace
 *  context stored with each run it creates, so every execution of the run, in any process
 *  and after any restart, continues that one trace. */
export interface StartTrace {
  readonly traceparent: string;
  /** `created`: false when the start was a duplicate (the first run is returned). */
  end(created: boolean, error?: unknown): void;
}

/** How a session of a run ended (RunOutcome's type, and the status of a suspension). */
export type ExecutionEnd =
  | { type: 'succeeded' | 'failed' | 'cancelled' | 'interrupted'; error?: ErrorInfo }
  | { type: 'suspended'; status: string; wakeAt?: number };

/** What the run's code waited on, did, or was told, on the execution's span. */
export type RunEventName = 'sleep' | 'wait' | 'signal' | 'retry' | 'park' | 'cancel';

/** One attempt of a step body, begun: the body runs inside `run` (so spans the body makes,
 *  an instrumented fetch, nest under the attempt), then `end` says how it ended. */
export interface AttemptTrace {
  run<T>(fn: () => T): T;
  end(ok: boolean, error?: ErrorInfo): void;
  /** The attempt span's ids, for the body's log lines; undefined when not recording. */
  ids?(): SpanIds;
}

/** A recording span's trace and span ids (lowercase hex), for log lines (docs/observability.md). */
export type SpanIds = { traceId: string; spanId: string } | undefined;

/** One execution (session) of a run: from its start or wake until it finished or suspended. */
export interface ExecutionTrace {
  attempt(name: string, kind: StepKind, attempt: number, idempotencyKey: string): AttemptTrace | undefined;
  event(name: RunEventName, step: string, at?: number): void;
  /** `firstExecution`: the run had nothing journaled (counted as started). */
  end(how: ExecutionEnd, firstExecution: boolean): void;
  /** The session only replayed what an earlier process had done (Restate replaying an
   *  invocation): nothing of it is reported again. */
  drop(): void;
  /** The execution span's ids, for ctx.log lines; undefined when not recording. */
  ids?(): SpanIds;
}

/** The work behind the runs an operator watches (docs/observability.md, "Metrics"): the
 *  backends report it where they can measure it. */
export interface BackendMeters {
  /** A due timer (a sleep's wake, a retry's backoff, a wait's timeout) fired `lateMs` after
   *  its due time. */
  timerFired(lateMs: number): void;
  /** One SQLite transaction of `writes` writes committed and was durable (fsync'd, at
   *  durability 'full') `seconds` after its COMMIT began. */
  committed(writes: number, seconds: number): void;
  /** A retention sweep deleted `runs` finished runs (with their journals) and `events` events. */
  retained(runs: number, events: number): void;
}

export interface RunTelemetry {
  /** Present when a meter provider listens (absent: the backends measure nothing). */
  readonly meters?: BackendMeters;
  /** A trigger or emit is creating runs; `parent`: a W3C traceparent received with it (a
   *  webhook's header), else the caller's active context is the parent. */
  starting(kind: 'start' | 'emit', name: string, id: string, parent?: string): StartTrace | undefined;
  /** An execution of a run begins; `traceparent`: the one stored with the run. */
  execution(runId: string, workflow: string, traceparent: string | undefined): ExecutionTrace | undefined;
}
