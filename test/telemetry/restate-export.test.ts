// On Restate, the run's spans and the Restate server's own invocation spans are one trace:
// the engine sends the run's traceparent with the run to Restate's ingress, and the embedded
// restate-server exports its spans where config restate.tracingEndpoint says, else where
// RESTATE_TRACING_ENDPOINT in the engine's environment (it inherits it) says. A local OTLP/HTTP receiver on 127.0.0.1 stands in for a collector:
// the protobuf it receives carries the run's 16-byte trace id.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createEngine } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';

it.each(['config restate.tracingEndpoint', 'RESTATE_TRACING_ENDPOINT'])('the embedded restate-server exports its invocation spans into the run\'s trace (%s)', async (how) => {
  const bodies: Buffer[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const before = process.env.RESTATE_TRACING_ENDPOINT;
  const endpoint = `otlp+http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  const byConfig = how.startsWith('config');
  if (byConfig) delete process.env.RESTATE_TRACING_ENDPOINT;
  else process.env.RESTATE_TRACING_ENDPOINT = endpoint;
  const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-otel-restate-export-'));
  const exporter = new InMemorySpanExporter();
  const wf = workflow('otel-export', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.do('one', () => 1));
  });
  const engine = await createEngine({
    backend: 'restate', dataDir, workflows: [wf], ...(byConfig ? { restate: { tracingEndpoint: endpoint } } : {}),
    telemetry: { tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) },
  });
  try {
    await engine.start();
    const { runId } = await engine.trigger('otel-export', {});
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
    const start = exporter.getFinishedSpans().find((s) => s.name === 'start otel-export')!;
    const traceId = Buffer.from(start.spanContext().traceId, 'hex');
    for (let i = 0; !bodies.some((b) => b.includes(traceId)); i++) {
      if (i > 200) throw new Error(`restate-server exported ${bodies.length} batches, none in the run's trace`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await engine.stop();
    if (before === undefined) delete process.env.RESTATE_TRACING_ENDPOINT;
    else process.env.RESTATE_TRACING_ENDPOINT = before;
    await new Promise((r) => receiver.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);
