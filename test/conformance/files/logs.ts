// Run logs and spans of a workflow FILE (docs/observability.md, "Logs"; docs/runner.md, the
// runLog frame), on every backend the files suite runs: the child's RunSession drops lines of
// replayed code as in-process, the engine tags each line and makes the execution's and the
// attempts' spans itself. New cases (the in-process ones live in test/telemetry/logs.ts).
import { expect } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { LogRecord } from '@tranquil/engine';
import { OUT_PERMISSIONS, sleep, until } from './harness.ts';
import type { FileKit } from './suite.ts';

export function logFileScenarios({ test, boot }: FileKit): void {
  test('file: ctx.log writes each line once across a retry, a wake and an engine restart; body lines carry step, attempt and the spans\' ids', async () => {
    const records: LogRecord[] = [];
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const rig = await boot(`
export default workflow('file-logs', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    ctx.log.info('begin', { n: 1 });
    const got = await step.do('flaky', { retries: { limit: 3, delay: 20, backoff: 'constant', jitter: false } }, ({ attempt, log }) => {
      log.info('trying', { attempt });
      if (attempt < 2) throw new Error('boom ' + attempt);
      return attempt;
    });
    ctx.log.debug('flaky done', { got });
    await step.sleep('nap', 3000);
    ctx.log.warn('woke');
    await step.do('after', () => 2);
    ctx.log.error('end', { ok: true });
    return 'done';
  });
});`, { log: { level: 'silent', runs: { level: 'debug', sink: (r) => records.push(r) } }, telemetry: { tracerProvider } });
    const { runId } = await rig.engine.trigger('file-logs', {});
    await until('the nap', async () => {
      const r = await rig.engine.runs.get(runId);
      return r.status === 'sleeping' && r.steps.some((s) => s.name === 'nap');
    }, 60_000);
    const again = await rig.restart();
    expect((await again.result(runId, { timeout: '60s' })).status).toBe('succeeded');
    await sleep(300); // a duplicate would come now, if any
    const mine = records.filter((r) => r.runId === runId);
    expect(mine.map((r) => `${r.level} ${r.message}`)).toEqual(['info begin', 'info trying', 'info trying', 'debug flaky done', 'warn woke', 'error end']);
    expect(mine[0]).toMatchObject({ workflow: 'file-logs', fields: { n: 1 } });
    expect(mine.filter((r) => r.message === 'trying').map((r) => [r.step, r.attempt, r.fields?.attempt])).toEqual([['flaky', 1, 1], ['flaky', 2, 2]]);
    for (const r of mine.filter((l) => l.message !== 'trying')) expect(r.step).toBeUndefined();
    // The spans, made by the engine: one step span per attempt, a run span per execution.
    await until('the last run span', () => exporter.getFinishedSpans().some((s) => s.name === 'run file-logs' && s.attributes['tranquil.run.status'] === 'succeeded'));
    const spans = exporter.getFinishedSpans().filter((s) => s.attributes['tranquil.run.id'] === runId);
    const attempts = spans.filter((s) => s.name === 'step flaky').sort((a, b) => Number(a.attributes['tranquil.step.attempt']) - Number(b.attributes['tranquil.step.attempt']));
    expect(attempts.map((s) => [s.attributes['tranquil.step.attempt'], s.attributes['tranquil.step.outcome']])).toEqual([[1, 'failed'], [2, 'succeeded']]);
    expect(spans.filter((s) => s.name === 'step after')).toHaveLength(1);
    const runSpans = spans.filter((s) => s.name === 'run file-logs');
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const trying = mine.filter((r) => r.message === 'trying');
    expect(trying.map((r) => r.spanId)).toEqual(attempts.map((s) => s.spanContext().spanId));
    for (const r of mine.filter((l) => l.step === undefined)) {
      expect(r.traceId).toBe(spans[0]!.spanContext().traceId);
      expect(runSpans.map((s) => s.spanContext().spanId)).toContain(r.spanId);
    }
  }, 150_000);
}
