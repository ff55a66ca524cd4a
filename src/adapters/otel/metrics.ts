// The engine's metrics through @opentelemetry/api (names: docs/observability.md). Built on
// a MeterProvider given in the config (`telemetry.meterProvider`, e.g. `tranquil serve`'s
// Prometheus exporter) or the global one at engine creation; on the API's no-op provider
// `off` is true and the engine records nothing (no attribute object per step).
import { createNoopMeter, type Attributes, type Counter, type Histogram, type Meter, type MeterProvider } from '@opentelemetry/api';
import type { RunGauges } from '../../ports/executor.ts';
import type { BackendMeters } from '../../ports/telemetry.ts';

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

/** Seconds, from 1 ms to 5 minutes (the SDK's default buckets are made for milliseconds). */
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class EngineMetrics implements BackendMeters {
  readonly off: boolean;
  private readonly runsStarted: Counter;
  private readonly runsFinished: Counter;
  private readonly suspensions: Counter;
  private readonly attempts: Counter;
  private readonly stepDuration: Histogram;
  private readonly meter: Meter;
  private readonly timerLag: Histogram;
  private readonly commitWrites: Histogram;
  private readonly commitDuration: Histogram;
  private readonly runsDeleted: Counter;
  private readonly eventsDeleted: Counter;

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
      advice: { explicitBucketBoundaries: SECONDS },
    });
    this.timerLag = meter.createHistogram('tranquil.timer.lag', {
      description: 'How late a due timer (sleep, retry backoff, wait timeout) fired', unit: 's', advice: { explicitBucketBoundaries: SECONDS },
    });
    this.commitWrites = meter.createHistogram('tranquil.sqlite.commit.writes', {
      description: 'Writes per SQLite transaction (group commit batch size)', unit: '{write}',
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512] },
    });
    this.commitDuration = meter.createHistogram('tranquil.sqlite.commit.duration', {
      description: 'From COMMIT to durable (the fsync included at durability full)', unit: 's',
      advice: { explicitBucketBoundaries: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] },
    });
    this.runsDeleted = meter.createCounter('tranquil.retention.runs_deleted', { description: 'Finished runs (with their journals) deleted by retention' });
    this.eventsDeleted = meter.createCounter('tranquil.retention.events_deleted', { description: 'Events deleted by retention' });
  }

  timerFired(lateMs: number): void {
    this.timerLag.record(Math.max(0, lateMs) / 1000);
  }

  committed(writes: number, seconds: number): void {
    this.commitWrites.record(writes);
    this.commitDuration.record(seconds);
  }

  retained(runs: number, events: number): void {
    this.runsDeleted.add(runs);
    this.eventsDeleted.add(events);
  }

  /** Gauges read at each collection (a Prometheus scrape) from the backend's runs now. */
  observe(read: () => RunGauges): void {
    if (this.off) return;
    const current = this.meter.createObservableGauge('tranquil.runs.current', { description: 'Runs not finished, by status now' });
    const queued = this.meter.createObservableGauge('tranquil.runs.queued', { description: 'Runs due to execute, waiting for a slot (maxConcurrentRuns)' });
    const executing = this.meter.createObservableGauge('tranquil.runs.executing', { description: 'Runs executing in this process now' });
    // The SDK keeps reporting a series' last value after a collection that skips it: a status
    // once seen is observed as 0 when no run has it, or 'running 1' stays for ever.
    const seen = new Set<string>();
    this.meter.addBatchObservableCallback((r) => {
      const g = read();
      for (const status of Object.keys(g.byStatus)) seen.add(status);
      for (const status of seen) r.observe(current, g.byStatus[status] ?? 0, { [ATTR.runStatus]: status });
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
