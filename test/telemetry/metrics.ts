// Metrics scenarios (docs/observability.md), run on every backend: the engine's instruments
// read through an in-memory MetricReader after a scripted set of runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import type { Backend } from './tracing.ts';

/** Reads on demand (collect()), nothing periodic. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Each data point of a metric as `attr=value,...` -> value (a histogram's: its count and sum). */
function points(all: MetricData[], name: string): Record<string, number | { count: number; sum: number }> {
  const m = all.find((d) => d.descriptor.name === name);
  const out: Record<string, number | { count: number; sum: number }> = {};
  for (const p of m?.dataPoints ?? []) {
    const key = Object.entries(p.attributes).map(([k, v]) => `${k.replace(/^tranquil\./, '')}=${String(v)}`).sort().join(',');
    const v = p.value as number | { count: number; sum?: number };
    out[key] = m!.dataPointType === DataPointType.HISTOGRAM ? { count: (v as { count: number }).count, sum: (v as { sum: number }).sum } : (v as number);
  }
  return out;
}

export function metricsScenarios(backend: Backend): void {
  describe(`metrics: ${backend}`, () => {
    const open: Engine[] = [];
    const dirs: string[] = [];
    afterEach(async () => {
      for (const e of open.splice(0)) await e.stop().catch(() => {});
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });

    test('runs started and finished by status, step attempts and durations, suspensions, runs by status now', async () => {
      const reader = new TestReader();
      const meterProvider = new MeterProvider({ readers: [reader] });
      let flakyCalls = 0;
      const ok = workflow('m-ok', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('a', async () => (await sleep(30), 1));
          await step.do('b', () => 2);
          return 'ok';
        });
      });
      const failing = workflow('m-fail', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.do('bad', { retries: { limit: 2, delay: 10, backoff: 'constant', jitter: false } }, () => {
          throw new Error('always');
        }));
      });
      const retried = workflow('m-retry', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.do('flaky', { retries: { limit: 3, delay: 10, backoff: 'constant', jitter: false } }, () => {
          if (++flakyCalls === 1) throw new Error('once');
          return 'fine';
        }));
      });
      const waiting = workflow('m-wait', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.waitForEvent('go'));
      });
      const dataDir = mkdtempSync(join(tmpdir(), `tranquil-metrics-${backend}-`));
      dirs.push(dataDir);
      const engine = await createEngine({ backend, dataDir, workflows: [ok, failing, retried, waiting], telemetry: { meterProvider } });
      await engine.start();
      open.push(engine);

      const ids = [
        (await engine.trigger('m-ok', {})).runId,
        (await engine.trigger('m-ok', {})).runId,
        (await engine.trigger('m-fail', {})).runId,
        (await engine.trigger('m-retry', {})).runId,
      ];
      const statuses = await Promise.all(ids.map(async (id) => (await engine.result(id, { timeout: '20s' })).status));
      expect(statuses).toEqual(['succeeded', 'succeeded', 'failed', 'succeeded']);
      const { runId: waiter } = await engine.trigger('m-wait', {});
      for (let i = 0; (await engine.runs.get(waiter))?.status !== 'waiting'; i++) {
        if (i > 400) throw new Error('m-wait never waited');
        await sleep(25);
      }

      const { resourceMetrics, errors } = await reader.collect();
      expect(errors).toEqual([]);
      const all = resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'tranquil').flatMap((s) => s.metrics);
      expect(points(all, 'tranquil.runs.started')).toEqual({ 'workflow=m-ok': 2, 'workflow=m-fail': 1, 'workflow=m-retry': 1, 'workflow=m-wait': 1 });
      expect(points(all, 'tranquil.runs.finished')).toEqual({
        'run.status=succeeded,workflow=m-ok': 2, 'run.status=failed,workflow=m-fail': 1, 'run.status=succeeded,workflow=m-retry': 1,
      });
      expect(points(all, 'tranquil.runs.suspended')).toEqual({
        'run.status=retrying,workflow=m-fail': 1, 'run.status=retrying,workflow=m-retry': 1, 'run.status=waiting,workflow=m-wait': 1,
      });
      expect(points(all, 'tranquil.step.attempts')).toEqual({
        'step.name=a,step.outcome=succeeded,workflow=m-ok': 2,
        'step.name=b,step.outcome=succeeded,workflow=m-ok': 2,
        'step.name=bad,step.outcome=failed,workflow=m-fail': 2,
        'step.name=flaky,step.outcome=failed,workflow=m-retry': 1,
        'step.name=flaky,step.outcome=succeeded,workflow=m-retry': 1,
      });
      const durations = points(all, 'tranquil.step.duration') as Record<string, { count: number; sum: number }>;
      expect(Object.fromEntries(Object.entries(durations).map(([k, v]) => [k, v.count]))).toEqual(points(all, 'tranquil.step.attempts'));
      // Seconds: step `a` awaited 30 ms in each of its two attempts.
      expect(durations['step.name=a,step.outcome=succeeded,workflow=m-ok']!.sum).toBeGreaterThanOrEqual(0.058);
      expect(all.find((d) => d.descriptor.name === 'tranquil.step.duration')?.descriptor.unit).toBe('s');

      if (backend === 'sqlite') {
        // The gauges read the runs now: the one waiting run, nothing queued or executing.
        expect(points(all, 'tranquil.runs.current')).toEqual({ 'run.status=waiting': 1 });
        expect(points(all, 'tranquil.runs.queued')).toEqual({ '': 0 });
        expect(points(all, 'tranquil.runs.executing')).toEqual({ '': 0 });
        // Once no run has a status, its series reads 0, not its last value (the SDK keeps a
        // series a collection skips: 'waiting 1' stayed after the run finished).
        await engine.signal(waiter, 'go', 1);
        expect((await engine.result(waiter, { timeout: '20s' })).status).toBe('succeeded');
        const after = (await reader.collect()).resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'tranquil').flatMap((s) => s.metrics);
        expect(points(after, 'tranquil.runs.current')).toEqual({ 'run.status=waiting': 0 });
      } else {
        // Restate's runs live in the server: no gauge from this process (docs/observability.md).
        expect(points(all, 'tranquil.runs.current')).toEqual({});
      }
      await meterProvider.shutdown();
    });

    test('timer lag, SQLite commit batches and commit time, retention work', async () => {
      const reader = new TestReader();
      const meterProvider = new MeterProvider({ readers: [reader] });
      const napper = workflow('m-nap', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('a', () => 1);
          await step.sleep('nap', 1500);
          return 'ok';
        });
      });
      const dataDir = mkdtempSync(join(tmpdir(), `tranquil-metrics-${backend}-`));
      dirs.push(dataDir);
      const engine = await createEngine({ backend, dataDir, workflows: [napper], telemetry: { meterProvider }, retention: { maxAge: 1 } });
      await engine.start();
      open.push(engine);
      const { runId } = await engine.trigger('m-nap', {});
      expect((await engine.result(runId, { timeout: '30s' })).status).toBe('succeeded');
      await sleep(20);
      expect((await engine.gc({ dryRun: true })).runs).toBeGreaterThanOrEqual(backend === 'sqlite' ? 1 : 0);
      const gc = await engine.gc();
      if (backend === 'sqlite') expect(gc.runs).toBe(1);

      const { resourceMetrics, errors } = await reader.collect();
      expect(errors).toEqual([]);
      const all = resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'tranquil').flatMap((s) => s.metrics);
      // One due timer (the nap), fired once; measured from its due time, not from the sleep's
      // start (that would be at least the 1.5 s slept).
      const lag = points(all, 'tranquil.timer.lag') as Record<string, { count: number; sum: number }>;
      expect(lag['']?.count).toBe(1);
      expect(lag['']!.sum).toBeGreaterThanOrEqual(0);
      expect(lag['']!.sum).toBeLessThan(1.5);
      // Retention: what the sweep deleted (the dry run deleted nothing and counts nothing).
      expect(points(all, 'tranquil.retention.runs_deleted')).toEqual({ '': gc.runs });
      expect(points(all, 'tranquil.retention.events_deleted')).toEqual({ '': gc.events });
      if (backend === 'sqlite') {
        // Every journal write went through a transaction: the run's insert, its steps, its end.
        const writes = points(all, 'tranquil.sqlite.commit.writes') as Record<string, { count: number; sum: number }>;
        const commits = points(all, 'tranquil.sqlite.commit.duration') as Record<string, { count: number; sum: number }>;
        expect(writes['']!.count).toBeGreaterThanOrEqual(1);
        expect(writes['']!.sum).toBeGreaterThanOrEqual(4);
        expect(writes['']!.sum).toBeGreaterThanOrEqual(writes['']!.count);
        expect(commits['']!.count).toBe(writes['']!.count);
        expect(commits['']!.sum).toBeGreaterThan(0);
      } else {
        // Restate journals in its server: no SQLite commits of runs to report.
        expect(points(all, 'tranquil.sqlite.commit.writes')).toEqual({});
      }
      await meterProvider.shutdown();
    });
  });
}
