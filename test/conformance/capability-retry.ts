// Conformance scenario (issue 16, docs/semantics.md `## Retry`), called from runConformance():
// a run that failed in a capability step (the provider threw a TerminalError) is retried AT
// that step, like a failed step.do: `why` says so before the retry, the retry discards the
// failed `use` step and asks the provider again with the same idempotency key, and the run
// succeeds. Before, the failed `use` was no retry point: the retry replayed the recorded
// failure and the run failed again at once, on both backends.
import { expect } from 'vitest';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function capabilityRetryScenarios({ test, boot }: Pick<ScenarioKit, 'test' | 'boot'>): void {
  test('capability: a run failed in step.use is retried at that step; the provider is asked again', async () => {
    const wf = workflow('print-job', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const doc = await step.do('render', () => 'doc-1');
        const printed = await step.use<string>('printer.print', doc);
        return step.do('notify', () => `notified: ${printed}`);
      });
    });
    const { engine } = await boot([wf]);
    let jammed = true;
    const keys: string[] = [];
    engine.capabilities.provide('printer.print', {}, (doc, info) => {
      keys.push(info.idempotencyKey);
      if (jammed) throw new TerminalError('paper jam');
      return `printed ${String(doc)}`;
    });
    const { runId } = await engine.trigger('print-job', null);
    const failed = await engine.result(runId, { timeout: '20s' });
    expect(failed.status).toBe('failed');
    expect(failed.steps.map((s) => [s.name, s.kind, s.status])).toEqual([['render', 'do', 'succeeded'], ['printer.print', 'use', 'failed']]);
    const why = await engine.runs.explain(runId);
    expect(why.retry?.from).toEqual({ seq: 1, name: 'printer.print' });
    expect(why.summary).toContain("runs.retry resumes it from step 'printer.print'");

    jammed = false;
    const retried = await engine.runs.retry(runId);
    expect(retried).toEqual({ from: { seq: 1, name: 'printer.print' }, discarded: [{ seq: 1, name: 'printer.print', kind: 'use', status: 'failed' }] });
    const done = await engine.result(runId, { timeout: '20s' });
    expect(done.status).toBe('succeeded');
    expect(done.output).toBe('notified: printed doc-1');
    expect(done.steps.map((s) => [s.name, s.status])).toEqual([['render', 'succeeded'], ['printer.print', 'succeeded'], ['notify', 'succeeded']]);
    expect(keys).toEqual([`${runId}/printer.print`, `${runId}/printer.print`]);
  }, 30_000);
}
