// RunTelemetry through @opentelemetry/api only (the engine bundles no SDK; the app registers
// one, or passes providers in the config). Span tree of a run (docs/observability.md):
//
//   start <workflow>   (or `emit <event>`) the trigger; a child of the caller's context or
//    │                 of a webhook's traceparent; its context is stored with the run
//    ├─ run <workflow>   one per execution (start, each wake after a sleep, wait or retry,
//    │   ├─ step <name>  a resume after a restart), all children of the stored context;
//    │   └─ step <name>  one per step body attempt; the body runs in its context
//    └─ run <workflow>   ...
//
// With no SDK the tracer's spans are non-recording: execution() then returns undefined
// (unless metrics are on) and the session builds nothing per step.
import { ProxyTracerProvider, ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Context, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { ErrorInfo } from '../../domain/errors.ts';
import type { StepKind } from '../../domain/run-view.ts';
import type { AttemptTrace, BackendMeters, ExecutionEnd, ExecutionTrace, RunEventName, RunTelemetry, SpanIds, StartTrace } from '../../ports/telemetry.ts';
import { ATTR, EngineMetrics } from './metrics.ts';
import { contextOf, traceparentOf } from './traceparent.ts';

export const TRACER_NAME = 'tranquil';

export class OtelTelemetry implements RunTelemetry {
  private readonly tracer: Tracer;
  /** The global provider is a proxy: an SDK registered after the engine was built is used. */
  private readonly proxy: ProxyTracerProvider | undefined;

  readonly meters: BackendMeters | undefined;

  constructor(tracerProvider: TracerProvider, private readonly metrics: EngineMetrics) {
    this.meters = metrics.off ? undefined : metrics;
    this.tracer = tracerProvider.getTracer(TRACER_NAME);
    this.proxy = tracerProvider instanceof ProxyTracerProvider ? tracerProvider : undefined;
  }

  /** No SDK behind the global proxy (yet): not even a no-op span is made. */
  private get noSdk(): boolean {
    return this.proxy !== undefined && this.proxy.getDelegateTracer(TRACER_NAME) === undefined;
  }

  starting(kind: 'start' | 'emit', name: string, id: string, parent?: string): StartTrace | undefined {
    if (this.noSdk) return undefined;
    const ctx = contextOf(parent, context.active()) ?? context.active();
    const span = this.tracer.startSpan(`${kind} ${name}`, { kind: SpanKind.PRODUCER }, ctx);
    if (!span.isRecording()) return undefined;
    if (kind === 'start') span.setAttributes({ [ATTR.workflow]: name, [ATTR.runId]: id });
    else span.setAttributes({ [ATTR.eventName]: name, [ATTR.eventId]: id });
    return {
      traceparent: traceparentOf(span.spanContext()),
      end(created, error) {
        if (error !== undefined) endFailed(span, error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) });
        else {
          if (kind === 'start') span.setAttribute(ATTR.created, created);
          span.end();
        }
      },
    };
  }

  execution(runId: string, workflow: string, traceparent: string | undefined): ExecutionTrace | undefined {
    if (this.metrics.off && this.noSdk) return undefined;
    // A run with no stored context (started by a schedule, or while no SDK was registered)
    // has a trace of its own per execution.
    const parent = contextOf(traceparent) ?? ROOT_CONTEXT;
    const span = this.tracer.startSpan(`run ${workflow}`, { kind: SpanKind.INTERNAL }, parent);
    const recording = span.isRecording();
    if (!recording && this.metrics.off) return undefined;
    if (recording) span.setAttributes({ [ATTR.runId]: runId, [ATTR.workflow]: workflow });
    return new Execution(this.tracer, this.metrics, workflow, runId, recording ? span : undefined, recording ? trace.setSpan(parent, span) : undefined);
  }
}

class Execution implements ExecutionTrace {
  constructor(
    private readonly tracer: Tracer,
    private readonly metrics: EngineMetrics,
    private readonly workflow: string,
    private readonly runId: string,
    private readonly span: Span | undefined,
    private readonly ctx: Context | undefined,
  ) {}

  attempt(name: string, kind: StepKind, attempt: number, idempotencyKey: string): AttemptTrace | undefined {
    let span: Span | undefined;
    if (this.ctx) {
      span = this.tracer.startSpan(`step ${name}`, {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.runId]: this.runId, [ATTR.workflow]: this.workflow, [ATTR.stepName]: name, [ATTR.stepKind]: kind,
          [ATTR.attempt]: attempt, [ATTR.idempotencyKey]: idempotencyKey,
        },
      }, this.ctx);
    }
    return new Attempt(this.metrics.off ? undefined : this, name, span, span && trace.setSpan(this.ctx!, span));
  }

  measured(step: string, ok: boolean, seconds: number): void {
    this.metrics.attempt(this.workflow, step, ok, seconds);
  }

  event(name: RunEventName, step: string, at?: number): void {
    if (!this.span) return;
    this.span.addEvent(`tranquil.${name}`, at === undefined ? { [ATTR.stepName]: step } : { [ATTR.stepName]: step, [ATTR.wakeAt]: new Date(at).toISOString() });
  }

  end(how: ExecutionEnd, firstExecution: boolean): void {
    if (!this.metrics.off) {
      if (firstExecution) this.metrics.runStarted(this.workflow);
      if (how.type === 'suspended') this.metrics.suspended(this.workflow, how.status);
      else if (how.type !== 'interrupted') this.metrics.runFinished(this.workflow, how.type);
    }
    const span = this.span;
    if (!span) return;
    span.setAttribute(ATTR.runStatus, how.type === 'suspended' ? how.status : how.type);
    if (how.type === 'failed' && how.error) return endFailed(span, how.error);
    if (how.type === 'interrupted') span.setStatus({ code: SpanStatusCode.ERROR, message: 'interrupted' });
    span.end();
  }

  drop(): void {
    // Never ended: an SDK exports a span only when it ends.
  }

  ids(): SpanIds {
    return idsOf(this.span);
  }
}

class Attempt implements AttemptTrace {
  private readonly t0 = performance.now();

  constructor(
    private readonly measure: Execution | undefined,
    private readonly step: string,
    private readonly span: Span | undefined,
    private readonly ctx: Context | undefined,
  ) {}

  run<T>(fn: () => T): T {
    return this.ctx ? context.with(this.ctx, fn) : fn();
  }

  ids(): SpanIds {
    return idsOf(this.span);
  }

  end(ok: boolean, error?: ErrorInfo): void {
    this.measure?.measured(this.step, ok, (performance.now() - this.t0) / 1000);
    const span = this.span;
    if (!span) return;
    span.setAttribute(ATTR.outcome, ok ? 'succeeded' : 'failed');
    if (!ok && error) return endFailed(span, error);
    span.end();
  }
}

function idsOf(span: Span | undefined): SpanIds {
  if (!span) return undefined;
  const c = span.spanContext();
  return { traceId: c.traceId, spanId: c.spanId };
}

function endFailed(span: Span, error: ErrorInfo): void {
  // The exception event and status of OpenTelemetry's semantic conventions.
  span.recordException({ name: error.name, message: error.message });
  span.setStatus({ code: SpanStatusCode.ERROR, message: `${error.name}: ${error.message}` });
  span.end();
}
