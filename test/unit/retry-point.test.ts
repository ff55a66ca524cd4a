import { describe, expect, it } from 'vitest';
import { explain } from '../../src/domain/explain.ts';
import { retryPlan, unknownRetryPoint, type RecordedStepInfo } from '../../src/domain/retry-point.ts';
import type { RunView, StepView } from '../../src/domain/run-view.ts';

const s = (seq: number, name: string, kind: RecordedStepInfo['kind'], status: RecordedStepInfo['status']): RecordedStepInfo => ({ seq, name, kind, status });

describe('retryPlan(steps, from?)', () => {
  it('resumes at the earliest failed do step and discards it and everything after', () => {
    const steps = [s(0, 'reserve', 'do', 'succeeded'), s(1, 'charge', 'do', 'failed'), s(2, 'release', 'do', 'succeeded'), s(3, 'notify', 'do', 'failed')];
    expect(retryPlan(steps)).toEqual({ from: { seq: 1, name: 'charge' }, discarded: steps.slice(1) });
  });

  it('a failed capability step (use) is a retry point like a failed do: the provider is asked again', () => {
    const steps = [s(0, 'read', 'do', 'succeeded'), s(1, 'browser.scrape', 'use', 'failed'), s(2, 'notify', 'do', 'succeeded')];
    expect(retryPlan(steps)).toEqual({ from: { seq: 1, name: 'browser.scrape' }, discarded: steps.slice(1) });
    expect(retryPlan([s(0, 'approval', 'wait', 'timedout'), s(1, 'device.write', 'use', 'failed')])?.from).toEqual({ seq: 1, name: 'device.write' });
  });

  it('keeps a caught timed-out wait before a failed do (timeouts are control flow)', () => {
    const steps = [s(0, 'reply', 'wait', 'timedout'), s(1, 'remind', 'do', 'succeeded'), s(2, 'send', 'do', 'failed')];
    expect(retryPlan(steps)?.from).toEqual({ seq: 2, name: 'send' });
  });

  it('falls back to the earliest timed-out wait when no do failed', () => {
    const steps = [s(0, 'ask', 'do', 'succeeded'), s(1, 'approval', 'wait', 'timedout'), s(2, 'ctx.now', 'now', 'succeeded')];
    expect(retryPlan(steps)).toEqual({ from: { seq: 1, name: 'approval' }, discarded: steps.slice(1) });
  });

  it('reads a journal by seq with holes (steps called, nothing recorded: waits open when the run failed)', () => {
    const journal: RecordedStepInfo[] = [];
    journal[2] = s(2, 'held', 'wait', 'timedout');
    journal[3] = s(3, 'check', 'do', 'failed');
    expect(retryPlan(journal)).toEqual({ from: { seq: 3, name: 'check' }, discarded: [s(3, 'check', 'do', 'failed')] });
    expect(retryPlan(journal, 'held')?.from).toEqual({ seq: 2, name: 'held' });
  });

  it('discards nothing when the run failed outside any step', () => {
    expect(retryPlan([s(0, 'a', 'do', 'succeeded')])).toEqual({ discarded: [] });
    expect(retryPlan([])).toEqual({ discarded: [] });
  });

  it('from: any recorded step by its unique name, in any order given', () => {
    const steps = [s(2, 'charge#2', 'do', 'failed'), s(0, 'charge', 'do', 'succeeded'), s(1, 'pause', 'sleep', 'succeeded')];
    expect(retryPlan(steps, 'pause')).toEqual({ from: { seq: 1, name: 'pause' }, discarded: [s(1, 'pause', 'sleep', 'succeeded'), s(2, 'charge#2', 'do', 'failed')] });
    expect(retryPlan(steps, 'charge#2')?.discarded).toEqual([s(2, 'charge#2', 'do', 'failed')]);
  });

  it('from: an unknown name gives no plan; the error names it in one line', () => {
    expect(retryPlan([s(0, 'a', 'do', 'failed')], 'b')).toBeUndefined();
    expect(unknownRetryPoint('r1', 'b').message).toBe("runs.retry: run r1 has no recorded step named 'b'");
  });

  it('reports only seq, name, kind and status of a richer record', () => {
    const view: StepView = { seq: 0, name: 'a', kind: 'do', status: 'failed', attempts: 3, error: { name: 'Error', message: 'x' }, startedAt: 'then' };
    expect(retryPlan([view])?.discarded).toEqual([{ seq: 0, name: 'a', kind: 'do', status: 'failed' }]);
  });
});

describe('explain() of a failed run says what runs.retry would do', () => {
  const run = (steps: StepView[], error: RunView['error']): RunView => ({
    runId: 'r1', workflow: 'wf', version: 'v1', status: 'failed', input: null, error, createdAt: 'c', updatedAt: 'u', steps,
  });
  const step = (seq: number, name: string, status: StepView['status'], error?: StepView['error'], kind: StepView['kind'] = 'do'): StepView =>
    ({ seq, name, kind, status, attempts: 1, ...(error ? { error } : {}) });

  it('a wrapped error: names the run error, the failed step, and what a retry discards', () => {
    const e = explain(run([step(0, 'sync', 'failed', { name: 'Error', message: 'remote 503' })], { name: 'Error', message: 'sync failed: remote 503' }), 0);
    expect(e.summary).toBe(
      "Run r1 of workflow 'wf' (version v1) failed with Error: sync failed: remote 503, after step 'sync' failed on attempt 1 with Error: remote 503. " +
        "runs.retry resumes it from step 'sync' and discards 1 recorded step ('sync'); 'sync' runs again with the same idempotency key.",
    );
    expect(e.failedStep).toEqual({ name: 'sync', attempts: 1, error: { name: 'Error', message: 'remote 503' } });
    expect(e.retry).toEqual({ from: { seq: 0, name: 'sync' }, discarded: [{ seq: 0, name: 'sync', kind: 'do', status: 'failed' }] });
  });

  it('a timed-out wait, and a failure outside any step', () => {
    const timeout = { name: 'TimeoutError', message: "waitForEvent 'approval' timed out after 100ms" };
    expect(explain(run([step(0, 'approval', 'timedout', timeout, 'wait')], timeout), 0).summary).toMatch(
      /failed: step 'approval' timed out \(TimeoutError: .*\)\. runs\.retry resumes it from step 'approval' .*'approval' waits again/,
    );
    expect(explain(run([step(0, 'a', 'succeeded')], { name: 'RangeError', message: 'bad' }), 0).summary).toBe(
      "Run r1 of workflow 'wf' (version v1) failed outside any step with RangeError: bad. runs.retry runs its code again from the last recorded step (nothing is discarded).",
    );
  });

  it('a run whose code diverged gets no retry hint', () => {
    const e = explain(run([step(0, 'a', 'succeeded')], { name: 'NonDeterminismError', message: 'run r1 diverged' }), 0);
    expect(e.summary).not.toMatch(/runs\.retry/);
  });
});
