// The engine's telemetry (docs/observability.md): the OpenTelemetry adapter on the providers
// the config names, else the global ones (an app's SDK registers those). `telemetry: false`
// turns it off entirely. Also the engine's loggers (config `log`): its messages and run lines.
import { metrics, trace } from '@opentelemetry/api';
import { EngineMetrics } from '../src/adapters/otel/metrics.ts';
import { OtelTelemetry } from '../src/adapters/otel/telemetry.ts';
import type { DurableExecutor } from '../src/ports/executor.ts';
import type { RunTelemetry } from '../src/ports/telemetry.ts';
import type { ResolvedConfig } from './config.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { RunLogOutput } from '../src/ports/run-log.ts';
import { levelLogger } from '../src/runtime/logger.ts';
import { runLogOutput, stderrMessageSink, stderrRecordSink } from '../src/runtime/log-format.ts';

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

/** The engine's own messages (config `log`): the given sink, else stderr in `log.format`. */
export function engineLoggerFor(config: ResolvedConfig): Logger {
  const log = config.log;
  return levelLogger(log?.level, log?.sink ?? (log?.format === 'json' ? stderrMessageSink('json') : undefined));
}

/** The lines of ctx.log and step bodies (config `log.runs`): by default stderr at info,
 *  like Temporal's, Restate's and DBOS's workflow loggers (docs/observability.md, "Logs"). */
export function runLogFor(config: ResolvedConfig): RunLogOutput | undefined {
  const runs = config.log?.runs;
  return runLogOutput(runs?.level ?? 'info', runs?.sink ?? stderrRecordSink(config.log?.format ?? 'text'));
}
