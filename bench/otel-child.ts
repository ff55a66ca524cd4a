// One side of the telemetry row (bench/lib/otel.ts): the 100-concurrent workload (10-step
// runs, SQLite durability full) with telemetry `off` (the engine calls no OpenTelemetry API),
// `api` (the default: the API with no SDK registered, a no-op), or `sdk` (the SDK registered
// globally: a tracer provider with a BatchSpanProcessor feeding an exporter that counts and
// drops, the async-hooks context manager, and a MeterProvider with a reader).
// Prints { stepsPerS: number[], mode, spans, metricPoints } on one line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createEngine } from '../compose/index.ts';
import { ALL_WORKFLOWS, STEPS_PER_RUN, tenSteps } from './lib/workflows.ts';
import { nowMs } from './lib/stats.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as { mode: 'off' | 'api' | 'sdk'; conc: number; runs: number; reps: number };

let spans = 0;
/** A batching exporter's destination that costs nothing: the SDK's own work is measured. */
const counting: SpanExporter = {
  export(batch: ReadableSpan[], done) {
    spans += batch.length;
    done({ code: 0 });
  },
  shutdown: async () => {},
};
class Reader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
const reader = new Reader();
let tracerProvider: BasicTracerProvider | undefined;
if (args.mode === 'sdk') {
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(counting)] });
  trace.setGlobalTracerProvider(tracerProvider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
}

const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-otel-'));
const engine = await createEngine({
  backend: 'sqlite', dataDir: dir, workflows: ALL_WORKFLOWS, durability: 'full', maxConcurrentRuns: 1000, log: { level: 'silent' },
  ...(args.mode === 'off' ? { telemetry: false as const } : {}),
});
await engine.start();
const loop = async (runs: number): Promise<number> => {
  let next = 0;
  const t0 = nowMs();
  const client = async () => {
    while (next < runs) {
      next++;
      const { runId } = await engine.trigger(tenSteps.name, {});
      const v = await engine.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`run ${runId} ended ${v.status}: ${v.error?.message}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.conc, runs) }, client));
  return (runs * STEPS_PER_RUN) / ((nowMs() - t0) / 1000);
};
try {
  await loop(Math.ceil(args.runs / 3)); // warm-up
  const stepsPerS: number[] = [];
  for (let r = 0; r < args.reps; r++) stepsPerS.push(await loop(args.runs));
  await tracerProvider?.forceFlush();
  const collected = args.mode === 'sdk' ? await reader.collect() : undefined;
  const metricPoints = collected ? collected.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).reduce((n, m) => n + m.dataPoints.length, 0) : 0;
  process.stdout.write(JSON.stringify({ stepsPerS, mode: args.mode, spans, metricPoints }) + '\n');
} finally {
  await engine.stop();
  rmSync(dir, { recursive: true, force: true });
}
