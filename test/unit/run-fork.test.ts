// runs.fork's plan (docs/control.md, Fork): which recorded steps a fork reuses, and what it
// refuses, in one line each. The conformance cases run it end to end on both backends.
import { describe, expect, it } from 'vitest';
import { entriesOfViews, forkPlan } from '../../src/domain/run-fork.ts';
import { deadlineError } from '../../src/domain/run-control.ts';
import { toStepView, type JournalEntry } from '../../src/domain/journal.ts';

const e = (seq: number, name: string, kind: JournalEntry['kind'], status: JournalEntry['status'], more: Partial<JournalEntry> = {}): JournalEntry =>
  ({ seq, name, kind, status, attempts: 1, ...more });

describe('forkPlan(runId, entries, from, children)', () => {
  const journal = [
    e(0, 'a', 'do', 'succeeded', { result: 1, order: 1 }),
    e(1, 'ctx.now', 'now', 'succeeded', { result: 5 }),
    e(2, 'go', 'wait', 'succeeded', { result: 'x', order: 2 }),
    e(3, 'b', 'do', 'failed', { error: { name: 'Error', message: 'boom' }, order: 3 }),
    e(4, 'c', 'do', 'succeeded', { result: 3, order: 4 }),
  ];

  it('reuses every finished step before the fork point, by name or by position, failed ones included', () => {
    expect(forkPlan('r', journal, 'c')).toEqual({ from: { seq: 4, name: 'c' }, entries: journal.slice(0, 4) });
    expect(forkPlan('r', journal, 2)).toEqual({ from: { seq: 2, name: 'go' }, entries: journal.slice(0, 2) });
    expect(forkPlan('r', journal, 0)).toEqual({ from: { seq: 0, name: 'a' }, entries: [] });
  });

  it('does not reuse a step still in flight before the fork point: the fork meets it anew', () => {
    const live = [e(0, 'slow', 'do', 'running'), e(1, 'nap', 'sleep', 'sleeping', { wakeAt: 9 }), e(2, 'fast', 'do', 'succeeded', { result: 1, order: 1 }), e(3, 'next', 'do', 'retrying')];
    expect(forkPlan('r', live, 'next').entries.map((x) => x.name)).toEqual(['fast']);
  });

  it('refuses a name or a position the run has not recorded, naming where the run is', () => {
    expect(() => forkPlan('r', journal, 'd')).toThrow("runs.fork: run r has not reached a step named 'd' (its last recorded step is 'c' at position 4; a name the code never called is not a step either)");
    expect(() => forkPlan('r', journal, 9)).toThrow("runs.fork: run r has no recorded step at position 9 (its last recorded step is 'c' at position 4)");
    expect(() => forkPlan('r', [], 0)).toThrow('runs.fork: run r has no recorded step at position 0 (it recorded no step)');
    const holes: JournalEntry[] = [];
    holes[1] = e(1, 'b', 'do', 'succeeded');
    expect(() => forkPlan('r', holes, 0)).toThrow(/no recorded step at position 0/);
  });

  it("refuses to reuse a step a cancel or the run's deadline stopped", () => {
    const cancelled = [e(0, 'go', 'wait', 'failed', { error: { name: 'CancelledError', message: 'run r was cancelled' } }), e(1, 'undo', 'do', 'succeeded')];
    expect(() => forkPlan('r', cancelled, 'undo')).toThrow("runs.fork: step 'go' before 'undo' was stopped by the cancel of run r; fork from 'go' or earlier");
    expect(forkPlan('r', cancelled, 'go').entries).toEqual([]);
    const timedOut = [e(0, 'nap', 'sleep', 'failed', { error: deadlineError(1000) }), e(1, 'release', 'do', 'succeeded')];
    expect(() => forkPlan('r', timedOut, 1)).toThrow("runs.fork: step 'nap' before 'release' was stopped by the deadline of run r; fork from 'nap' or earlier");
    // A step's own timeout is its outcome: reused.
    const own = [e(0, 'ask', 'wait', 'timedout', { error: { name: 'TimeoutError', message: "waitForEvent 'ask' timed out after 5ms" } }), e(1, 'next', 'do', 'succeeded')];
    expect(forkPlan('r', own, 'next').entries).toEqual([own[0]]);
  });

  it("refuses to reuse a child's start whose end the reused steps did not take (only the original hears it)", () => {
    const steps = [e(0, 'spawn', 'do', 'succeeded', { result: 'r:spawn' }), e(1, 'child:r:spawn', 'wait', 'succeeded', { result: {} }), e(2, 'after', 'do', 'succeeded')];
    const children = [{ runId: 'r:spawn', step: 'spawn' }];
    expect(() => forkPlan('r', steps, 'child:r:spawn', children)).toThrow("runs.fork: step 'spawn' before 'child:r:spawn' started child run r:spawn, whose end only run r hears; fork from 'spawn' or earlier (the fork then starts a child of its own)");
    expect(forkPlan('r', steps, 'after', children).entries.map((x) => x.name)).toEqual(['spawn', 'child:r:spawn']);
    expect(forkPlan('r', steps, 'spawn', children).entries).toEqual([]);
  });
});

describe('entriesOfViews(steps)', () => {
  it('gives the journal back from step views, with completion order by end time then position (not for ctx.now or ctx.random)', () => {
    const journal = [
      e(0, 'slow', 'do', 'succeeded', { result: 1, startedAt: 1000, endedAt: 3000 }),
      e(1, 'ctx.random', 'random', 'succeeded', { result: 0.5, startedAt: 1000, endedAt: 1000 }),
      e(2, 'fast', 'do', 'succeeded', { result: 2, startedAt: 1000, endedAt: 2000 }),
      e(3, 'tie', 'do', 'failed', { error: { name: 'Error', message: 'x' }, startedAt: 1000, endedAt: 2000, retryLimit: 3 }),
      e(4, 'open', 'wait', 'waiting', { startedAt: 1000, wakeAt: 9000 }),
    ];
    const back = entriesOfViews(journal.map(toStepView));
    expect(back.map((x) => [x.name, x.order])).toEqual([['slow', 3], ['ctx.random', undefined], ['fast', 1], ['tie', 2], ['open', undefined]]);
    expect(back.map(({ order: _o, ...rest }) => rest)).toEqual(journal);
  });
});
