// The OpenTelemetry adapter alone (src/adapters/otel/): with no SDK it makes nothing, an SDK
// registered globally after the engine's telemetry was built is picked up, and the stored
// traceparent text is read strictly (a bad one is ignored, never a broken parent).
import { afterEach, describe, expect, it } from 'vitest';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EngineMetrics } from '../../src/adapters/otel/metrics.ts';
import { OtelTelemetry } from '../../src/adapters/otel/telemetry.ts';
import { contextOf, traceparentOf } from '../../src/adapters/otel/traceparent.ts';

afterEach(() => {
  trace.disable();
  context.disable();
});

describe('OtelTelemetry on the global providers', () => {
  it('with no SDK registered: no start trace, no execution trace (the session then builds nothing per step)', () => {
    const t = new OtelTelemetry(trace.getTracerProvider(), new EngineMetrics(metrics.getMeterProvider()));
    expect(t.starting('start', 'wf', 'r1')).toBeUndefined();
    expect(t.execution('r1', 'wf', undefined)).toBeUndefined();
  });

  it('an SDK registered after the engine was built is used from then on', () => {
    const t = new OtelTelemetry(trace.getTracerProvider(), new EngineMetrics(metrics.getMeterProvider()));
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const start = t.starting('start', 'wf', 'r1')!;
    expect(start.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    start.end(true);
    const exec = t.execution('r1', 'wf', start.traceparent)!;
    const at = exec.attempt('s', 'do', 1, 'r1/s')!;
    expect(at.run(() => trace.getActiveSpan()?.spanContext().spanId)).toMatch(/^[0-9a-f]{16}$/);
    at.end(true);
    exec.end({ type: 'succeeded' }, true);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(['start wf', 'step s', 'run wf']);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  });
});

describe('traceparent', () => {
  const good = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  it('reads a W3C traceparent as a remote parent and writes it back the same', () => {
    const sc = trace.getSpanContext(contextOf(good)!)!;
    expect(sc).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
    expect(traceparentOf(sc)).toBe(good);
  });

  it('ignores what is not one: wrong lengths, version ff, all-zero ids, extra fields on version 00', () => {
    for (const bad of ['', 'garbage', good.slice(0, -1), `ff${good.slice(2)}`, '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', `${good}-extra`, '00-4BF92F3577B34DA6A3CE929D0E0E473-00f067aa0ba902b7-01']) {
      expect(contextOf(bad), bad).toBeUndefined();
    }
    // A later version may carry more fields: the first four are read.
    expect(contextOf(`01${good.slice(2)}-more`)).toBeDefined();
  });
});
