// Run log scenarios (docs/observability.md, "Logs"), run on every backend by the otel-*
// test files: ctx.log writes each line once per run however often the code is replayed
// (a sleep's wake, an engine restart: on Restate the SDK's replay of the invocation too),
// a step body's lines carry its attempt, and with an SDK the lines carry the spans' ids.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createEngine, type Engine, type EngineConfig, type LogRecord } from '@tranquil/engine';
import { manual, workflow, type WorkflowDefinition } from '@tranquil/sdk';
import { until, type Backend } from './tracing.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


export function logScenarios(backend: Backend): void {
  describe(`run logs: ${backend}`, () => {
    const open: Engine[] = [];
    const dirs: string[] = [];
    const records: LogRecord[] = [];
    afterEach(async () => {
      for (const e of open.splice(0)) await e.stop().catch(() => {});
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
      records.length = 0;
    });

    async function boot(workflows: WorkflowDefinition[], dir?: string, extra: EngineConfig = {}): Promise<{ engine: Engine; dir: string }> {
      const dataDir = dir ?? mkdtempSync(join(tmpdir(), `tranquil-logs-${backend}-`));
      if (!dir) dirs.push(dataDir);
      const engine = await createEngine({ backend, dataDir, workflows, log: { runs: { level: 'debug', sink: (r) => records.push(r) } }, ...extra });
      await engine.start();
      open.push(engine);
      return { engine, dir: dataDir };
    }

    const linesOf = (runId: string) => records.filter((r) => r.runId === runId);

    test('ctx.log writes each line once across a wake and an engine restart (replays write nothing)', async () => {
      const wf = workflow('logs-nap', (w) => {
        w.trigger(manual());
        w.run(async ({ step, ctx }) => {
          ctx.log.info('begin', { n: 1 });
          await step.do('before', () => 1);
          ctx.log.debug('before done');
          await step.sleep('short', 30);
          ctx.log.warn('short nap over');
          await step.sleep('nap', 1500);
          ctx.log.info('woke');
          await step.do('after', () => 2);
          ctx.log.error('end', { ok: true });
          return 'done';
        });
      });
      const first = await boot([wf]);
      const { runId } = await first.engine.trigger('logs-nap', {});
      await until('the long nap', async () => {
        const r = await first.engine.runs.get(runId);
        return r?.status === 'sleeping' && r.steps.some((s) => s.name === 'nap');
      });
      await first.engine.stop();
      open.splice(open.indexOf(first.engine), 1);
      const { engine } = await boot([wf], first.dir);
      expect((await engine.result(runId, { timeout: '30s' })).status).toBe('succeeded');
      await sleep(200); // a duplicate would come now, if any
      const mine = linesOf(runId);
      expect(mine.map((r) => `${r.level} ${r.message}`)).toEqual(['info begin', 'debug before done', 'warn short nap over', 'info woke', 'error end']);
      expect(mine[0]).toMatchObject({ workflow: 'logs-nap', fields: { n: 1 } });
      expect(mine[4]!.fields).toEqual({ ok: true });
      for (const r of mine) expect(r.step).toBeUndefined();
    });

    test("a retried body's lines carry attempt 1 and 2; the code's lines around it are written once", async () => {
      const wf = workflow('logs-retry', (w) => {
        w.trigger(manual());
        w.run(async ({ step, ctx }) => {
          ctx.log.info('start');
          const got = await step.do('flaky', { retries: { limit: 3, delay: 20, backoff: 'constant', jitter: false } }, ({ attempt, log }) => {
            log.info('trying', { attempt });
            if (attempt < 2) throw new Error(`boom ${attempt}`);
            return attempt;
          });
          ctx.log.info('flaky done', { got });
          return got;
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('logs-retry', {});
      expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
      await sleep(100);
      const mine = linesOf(runId);
      expect(mine.map((r) => r.message)).toEqual(['start', 'trying', 'trying', 'flaky done']);
      const body = mine.filter((r) => r.message === 'trying');
      expect(body.map((r) => [r.step, r.attempt, r.fields?.attempt])).toEqual([['flaky', 1, 1], ['flaky', 2, 2]]);
      expect(mine[3]!.fields).toEqual({ got: 2 });
    });

    test('with an SDK registered the lines carry the trace and span ids of their run and step spans', async () => {
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const wf = workflow('logs-traced', (w) => {
        w.trigger(manual());
        w.run(async ({ step, ctx }) => {
          ctx.log.info('in run');
          await step.do('work', ({ log }) => log.info('in body'));
          return 'ok';
        });
      });
      const { engine } = await boot([wf], undefined, { telemetry: { tracerProvider: provider } });
      const { runId } = await engine.trigger('logs-traced', {});
      expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
      await until('the run span', async () => exporter.getFinishedSpans().some((s) => s.name === 'run logs-traced' && s.attributes['tranquil.run.id'] === runId));
      const spans = exporter.getFinishedSpans().filter((s) => s.attributes['tranquil.run.id'] === runId);
      const run = spans.find((s) => s.name === 'run logs-traced')!;
      const work = spans.find((s) => s.name === 'step work')!;
      const [inRun, inBody] = [linesOf(runId).find((r) => r.message === 'in run')!, linesOf(runId).find((r) => r.message === 'in body')!];
      expect(inRun).toMatchObject({ traceId: run.spanContext().traceId, spanId: run.spanContext().spanId });
      expect(inBody).toMatchObject({ traceId: work.spanContext().traceId, spanId: work.spanContext().spanId, step: 'work', attempt: 1 });
      expect(linesOf(runId)).toHaveLength(2);
    });
  });
}
