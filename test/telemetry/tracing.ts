// Tracing scenarios (docs/observability.md), run on every backend by a few-line test file
// (tracing-sqlite.test.ts, tracing-restate.test.ts), as the conformance suite does: real
// engines with the OpenTelemetry SDK's in-memory exporter and async-hooks context manager.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, webhook, workflow, type WorkflowDefinition } from '@tranquil/sdk';

export type Backend = 'sqlite' | 'restate';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 20 ms until it holds, or throws naming `what` (shared by logs.ts). */
export async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const attr = (s: ReadableSpan, k: string) => s.attributes[k];
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

export function tracingScenarios(backend: Backend): void {
  describe(`tracing: ${backend}`, () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    // The test's own spans (an "instrumented" HTTP client), from the same SDK.
    const tracer = provider.getTracer('test');
    const contextManager = new AsyncLocalStorageContextManager();
    const open: Engine[] = [];
    const dirs: string[] = [];

    beforeAll(() => {
      context.setGlobalContextManager(contextManager.enable());
    });
    afterAll(() => {
      context.disable();
    });
    afterEach(async () => {
      for (const e of open.splice(0)) await e.stop().catch(() => {});
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
      exporter.reset();
    });

    async function boot(workflows: WorkflowDefinition[], dir?: string): Promise<{ engine: Engine; dir: string }> {
      const dataDir = dir ?? mkdtempSync(join(tmpdir(), `tranquil-otel-${backend}-`));
      if (!dir) dirs.push(dataDir);
      const engine = await createEngine({ backend, dataDir, workflows, telemetry: { tracerProvider: provider } });
      await engine.start();
      open.push(engine);
      return { engine, dir: dataDir };
    }

    /** The spans of one run's trace, by name. */
    function spansOf(traceId: string) {
      const all = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      const named = (name: string) => all.filter((s) => s.name === name);
      return { all, named };
    }

    function startSpan(runId: string): ReadableSpan {
      const starts = exporter.getFinishedSpans().filter((s) => s.name.startsWith('start ') && attr(s, 'tranquil.run.id') === runId);
      expect(starts).toHaveLength(1);
      return starts[0]!;
    }

    test('a run with a retried step: start -> run per execution -> one span per attempt', async () => {
      const wf = workflow('otel-retry', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('flaky', { retries: { limit: 3, delay: 20, backoff: 'constant', jitter: false } }, ({ attempt }) => {
            if (attempt < 2) throw new Error(`boom ${attempt}`);
            return attempt;
          });
          await step.do('after', () => 'ok');
          return 'done';
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('otel-retry', {});
      expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
      await until('the last run span', async () => spansOf(startSpan(runId).spanContext().traceId).named('run otel-retry').some((s) => attr(s, 'tranquil.run.status') === 'succeeded'));

      const start = startSpan(runId);
      expect(start.kind).toBe(SpanKind.PRODUCER);
      expect(attr(start, 'tranquil.workflow')).toBe('otel-retry');
      expect(attr(start, 'tranquil.run.created')).toBe(true);
      const { all, named } = spansOf(start.spanContext().traceId);
      const runs = named('run otel-retry').sort((a, b) => (attr(a, 'tranquil.run.status') === 'retrying' ? -1 : 1) - (attr(b, 'tranquil.run.status') === 'retrying' ? -1 : 1));
      // Two executions: the first ends retrying (with a retry event), the second succeeds.
      expect(runs.map((r) => attr(r, 'tranquil.run.status'))).toEqual(['retrying', 'succeeded']);
      for (const r of runs) {
        expect(parentOf(r)).toBe(idOf(start));
        expect(attr(r, 'tranquil.run.id')).toBe(runId);
      }
      expect(runs[0]!.events.map((e) => e.name)).toEqual(['tranquil.retry']);
      expect(runs[0]!.events[0]!.attributes?.['tranquil.step.name']).toBe('flaky');

      const flaky = named('step flaky').sort((a, b) => Number(attr(a, 'tranquil.step.attempt')) - Number(attr(b, 'tranquil.step.attempt')));
      expect(flaky.map((s) => attr(s, 'tranquil.step.attempt'))).toEqual([1, 2]);
      expect(flaky.map(parentOf)).toEqual([idOf(runs[0]!), idOf(runs[1]!)]);
      expect(flaky[0]!.status.code).toBe(SpanStatusCode.ERROR);
      expect(flaky[0]!.events.find((e) => e.name === 'exception')?.attributes?.['exception.message']).toBe('boom 1');
      expect(attr(flaky[0]!, 'tranquil.step.outcome')).toBe('failed');
      expect(attr(flaky[1]!, 'tranquil.step.outcome')).toBe('succeeded');
      for (const s of flaky) {
        expect(attr(s, 'tranquil.step.kind')).toBe('do');
        expect(attr(s, 'tranquil.step.idempotency_key')).toBe(`${runId}/flaky`);
      }
      // The second execution replayed nothing of the first: `after` ran once, in it.
      expect(named('step after').map(parentOf)).toEqual([idOf(runs[1]!)]);
      expect(all).toHaveLength(1 + 2 + 2 + 1);
    });

    test('a sleep across an engine restart: one trace id, no duplicate spans', async () => {
      let calls = 0;
      const wf = workflow('otel-nap', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('before', () => ++calls);
          await step.sleep('nap', 1500);
          await step.do('after', () => 'woke');
          return 'done';
        });
      });
      const first = await boot([wf]);
      const { runId } = await first.engine.trigger('otel-nap', {});
      await until('the run sleeping', async () => (await first.engine.runs.get(runId))?.status === 'sleeping');
      await first.engine.stop();
      open.splice(open.indexOf(first.engine), 1);
      const { engine } = await boot([wf], first.dir);
      expect((await engine.result(runId, { timeout: '30s' })).status).toBe('succeeded');
      const start = startSpan(runId);
      const traceId = start.spanContext().traceId;
      await until('the resumed run span', async () => spansOf(traceId).named('run otel-nap').length >= 2);
      await sleep(200); // a duplicate would come now, if any

      const mine = exporter.getFinishedSpans().filter((s) => attr(s, 'tranquil.run.id') === runId);
      // Everything of the run is in the one trace its start began.
      expect(new Set(mine.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
      const { named, all } = spansOf(traceId);
      const runs = named('run otel-nap');
      expect(runs.map((r) => attr(r, 'tranquil.run.status')).sort()).toEqual(['sleeping', 'succeeded']);
      for (const r of runs) expect(parentOf(r)).toBe(idOf(start));
      const sleeping = runs.find((r) => attr(r, 'tranquil.run.status') === 'sleeping')!;
      expect(sleeping.events.map((e) => e.name)).toEqual(['tranquil.sleep']);
      expect(sleeping.events[0]!.attributes?.['tranquil.step.name']).toBe('nap');
      // The replayed step emitted nothing after the restart: one span per step body run.
      expect(named('step before')).toHaveLength(1);
      expect(named('step after')).toHaveLength(1);
      expect(parentOf(named('step before')[0]!)).toBe(idOf(sleeping));
      expect(parentOf(named('step after')[0]!)).toBe(idOf(runs.find((r) => r !== sleeping)!));
      expect(all).toHaveLength(1 + 2 + 2);
      expect(calls).toBe(1);
    });

    test('a webhook delivery carrying traceparent: the run is part of the sender\'s trace', async () => {
      const wf = workflow('otel-hook', (w) => {
        w.trigger(webhook({ path: 'otel-hook' }));
        w.run(async ({ step, input }) => step.do('echo', () => input));
      });
      const { engine } = await boot([wf]);
      const senderTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
      const senderSpan = '00f067aa0ba902b7';
      const res = await fetch(await engine.webhookUrl('otel-hook'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${senderTrace}-${senderSpan}-01` },
        body: JSON.stringify({ hello: 'otel' }),
      });
      expect(res.status).toBe(202);
      const { runId } = (await res.json()) as { runId: string };
      expect((await engine.result(runId, { timeout: '20s' })).output).toEqual({ hello: 'otel' });
      await until('the run span', async () => spansOf(senderTrace).named('run otel-hook').length === 1);

      const start = startSpan(runId);
      expect(start.spanContext().traceId).toBe(senderTrace);
      expect(parentOf(start)).toBe(senderSpan);
      const { named } = spansOf(senderTrace);
      const run = named('run otel-hook')[0]!;
      expect(parentOf(run)).toBe(idOf(start));
      expect(named('step echo').map(parentOf)).toEqual([idOf(run)]);
    });

    test('an HTTP call inside a step body nests under the attempt span', async () => {
      const seen: IncomingHttpHeaders[] = [];
      const server = createServer((req, res) => {
        seen.push(req.headers);
        res.end('pong');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`;
      try {
        const wf = workflow('otel-fetch', (w) => {
          w.trigger(manual());
          w.run(async ({ step }) =>
            step.do('call', async () => {
              await sleep(5); // the context survives an await inside the body
              // What an instrumented HTTP client does: a CLIENT span in the active context,
              // its context sent as the traceparent header.
              return tracer.startActiveSpan('GET /ping', { kind: SpanKind.CLIENT }, async (span) => {
                const sc = span.spanContext();
                const r = await fetch(url, { headers: { traceparent: `00-${sc.traceId}-${sc.spanId}-01` } });
                const text = await r.text();
                span.end();
                return text;
              });
            }),
          );
        });
        const { engine } = await boot([wf]);
        const { runId } = await engine.trigger('otel-fetch', {});
        expect((await engine.result(runId, { timeout: '20s' })).output).toBe('pong');
        const traceId = startSpan(runId).spanContext().traceId;
        await until('the run span', async () => spansOf(traceId).named('run otel-fetch').length === 1);

        const { named } = spansOf(traceId);
        const attempt = named('step call');
        expect(attempt).toHaveLength(1);
        const client = named('GET /ping');
        expect(client).toHaveLength(1);
        expect(parentOf(client[0]!)).toBe(idOf(attempt[0]!));
        // The server was called within the run's trace, by the client span.
        expect(seen).toHaveLength(1);
        expect(seen[0]!.traceparent).toBe(`00-${traceId}-${idOf(client[0]!)}-01`);
        // Outside a body, the engine leaves no span active in the caller's context.
        expect(trace.getActiveSpan()).toBeUndefined();
      } finally {
        await new Promise((r) => server.close(r));
      }
    });
  });
}
