// The engine's telemetry (docs/observability.md): the OpenTelemetry adapter on the providers
// the config names, else the global ones (an app's SDK registers those). `telemetry: false`
// turns it off entirely.
import { metrics, trace } from '@opentelemetry/api';
import { EngineMetrics } from '../src/adapters/otel/metrics.ts';
import { OtelTelemetry } from '../src/adapters/otel/telemetry.ts';
import type { RunTelemetry } from '../src/ports/telemetry.ts';
import type { ResolvedConfig } from './config.ts';

export function telemetryFor(config: ResolvedConfig): RunTelemetry | undefined {
  const t = config.telemetry;
  if (t === false) return undefined;
  // The global meter provider has no proxy: it is read once, here (register the SDK first).
  return new OtelTelemetry(t?.tracerProvider ?? trace.getTracerProvider(), new EngineMetrics(t?.meterProvider ?? metrics.getMeterProvider()));
}
