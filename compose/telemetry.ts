// The engine's telemetry (docs/observability.md): the OpenTelemetry adapter on the providers
// the config names, else the global ones (an app's SDK registers those). `telemetry: false`
// turns it off entirely.
import { metrics, trace } from '@opentelemetry/api';
import { EngineMetrics } from '../src/adapters/otel/metrics.ts';
import { OtelTelemetry } from '../src/adapters/otel/telemetry.ts';
import type { DurableExecutor } from '../src/ports/executor.ts';
import type { RunTelemetry } from '../src/ports/telemetry.ts';
import type { ResolvedConfig } from './config.ts';

export interface EngineTelemetry {
  telemetry: RunTelemetry;
  /** Registers the backend's gauges (runs by status, queued, executing) where it has them. */
  watch(executor: DurableExecutor): void;
}

export function telemetryFor(config: ResolvedConfig): EngineTelemetry | undefined {
  const t = config.telemetry;
  if (t === false) return undefined;
  // The global meter provider has no proxy: it is read once, here (register the SDK first).
  const m = new EngineMetrics(t?.meterProvider ?? metrics.getMeterProvider());
  return {
    telemetry: new OtelTelemetry(t?.tracerProvider ?? trace.getTracerProvider(), m),
    watch(executor) {
      const gauges = executor.gauges?.bind(executor);
      if (gauges) m.observe(gauges);
    },
  };
}
