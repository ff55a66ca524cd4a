// The engine's metrics through @opentelemetry/api (names: docs/observability.md). Built on
// a MeterProvider given in the config (`telemetry.meterProvider`, e.g. `tranquil serve`'s
// Prometheus exporter) or the global one at engine creation; on the API's no-op provider
// `off` is true and the engine records nothing (no attribute object per step).
import { createNoopMeter, type Attributes, type Counter, type Histogram, type Meter, type MeterProvider } from '@opentelemetry/api';
import type { RunGauges } from '../../ports/executor.ts';

export const METER_NAME = 'tranquil';

/** Attribute names shared by spans and metrics (the `tranquil.` prefix: no OpenTelemetry
 *  semantic convention names a workflow run or step). */
export const ATTR = {
  runId: 'tranquil.run.id',
  workflow: 'tranquil.workflow',
  runStatus: 'tranquil.run.status',
  stepName: 'tranquil.step.name',
  stepKind: 'tranquil.step.kind',
  attempt: 'tranquil.step.attempt',
  idempotencyKey: 'tranquil.step.idempotency_key',
  outcome: 'tranquil.step.outcome',
  eventName: 'tranquil.event.name',
  eventId: 'tranquil.event.id',
  created: 'tranquil.run.created',
  wakeAt: 'tranquil.wake_at',
} as const;

const NOOP_METER = createNoopMeter().constructor;

export class EngineMetrics {
  readonly off: boolean;
  private readonly runsStarted: Counter;
  private readonly runsFinished: Counter;
  private readonly suspensions: Counter;
  private readonly attempts: Counter;
  private readonly stepDuration: Histogram;
  private readonly meter: Meter;

  constructor(provider: MeterProvider) {
    const meter: Meter = (this.meter = provider.getMeter(METER_NAME));
    this.off = meter.constructor === NOOP_METER;
    this.runsStarted = meter.createCounter('tranquil.runs.started', { description: 'Runs whose first execution began' });
    this.runsFinished = meter.createCounter('tranquil.runs.finished', { description: 'Runs that reached a final status, by status' });
    this.suspensions = meter.createCounter('tranquil.runs.suspended', { description: 'Executions that ended suspended (sleeping, waiting, retrying, parked), by status' });
    this.attempts = meter.createCounter('tranquil.step.attempts', { description: 'Step body attempts, by outcome' });
    this.stepDuration = meter.createHistogram('tranquil.step.duration', {
      description: 'Duration of one step body attempt', unit: 's',
      // In seconds (the SDK's default buckets, 0-10000, are made for milliseconds).
      advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] },
    });
  }

  /** Gauges read at each collection (a Prometheus scrape) from the backend's runs now. */
  observe(read: () => RunGauges): void {
    if (this.off) return;
    const current = this.meter.createObservableGauge('tranquil.runs.current', { description: 'Runs not finished, by status now' });
    const queued = this.meter.createObservableGauge('tranquil.runs.queued', { description: 'Runs due to execute, waiting for a slot (maxConcurrentRuns)' });
    const executing = this.meter.createObservableGauge('tranquil.runs.executing', { description: 'Runs executing in this process now' });
    this.meter.addBatchObservableCallback((r) => {
      const g = read();
      for (const [status, n] of Object.entries(g.byStatus)) r.observe(current, n, { [ATTR.runStatus]: status });
      r.observe(queued, g.queued);
      r.observe(executing, g.executing);
    }, [current, queued, executing]);
  }

  runStarted(workflow: string): void {
    this.runsStarted.add(1, { [ATTR.workflow]: workflow });
  }

  runFinished(workflow: string, status: string): void {
    this.runsFinished.add(1, { [ATTR.workflow]: workflow, [ATTR.runStatus]: status });
  }

  suspended(workflow: string, status: string): void {
    this.suspensions.add(1, { [ATTR.workflow]: workflow, [ATTR.runStatus]: status });
  }

  attempt(workflow: string, step: string, ok: boolean, seconds: number): void {
    const a: Attributes = { [ATTR.workflow]: workflow, [ATTR.stepName]: step, [ATTR.outcome]: ok ? 'succeeded' : 'failed' };
    this.attempts.add(1, a);
    this.stepDuration.record(seconds, a);
  }
}
