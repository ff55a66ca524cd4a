// `why` for every state (issue 15): the exact sentence and the next command explain() gives,
// from a run's view alone. The backends' side (that each state's view comes out the same on
// SQLite and Restate) is test/conformance/why.ts; the engine-less states read from the file's
// owner row are test/sqlite/why-engine.test.ts.
import { describe, expect, it } from 'vitest';
import { explain } from '../../src/domain/explain.ts';
import { explainSchedules } from '../../src/domain/schedule.ts';
import type { RunView, StepView } from '../../src/domain/run-view.ts';

const NOW = Date.parse('2026-03-28T08:00:00.000Z');
const head = "Run r1 of workflow 'wf' (version v1)";
const run = (status: RunView['status'], steps: StepView[], extra: Partial<RunView> = {}): RunView => ({
  runId: 'r1', workflow: 'wf', version: 'v1', status, input: null, createdAt: '2026-03-28T07:00:00.000Z', updatedAt: '2026-03-28T07:30:00.000Z', steps, ...extra,
});
const ok = (seq: number, name: string): StepView => ({ seq, name, kind: 'do', status: 'succeeded', attempts: 1 });

describe('why: every run state has one sentence and a next command', () => {
  it('sleeping: until, absolute UTC and relative', () => {
    const e = explain(run('sleeping', [ok(0, 'a'), { seq: 1, name: 'pause', kind: 'sleep', status: 'sleeping', attempts: 1, wakeAt: '2026-03-30T08:00:00.000Z' }]), NOW);
    expect(e.summary).toBe(`${head} is sleeping in step 'pause' until 2026-03-30T08:00:00.000Z (in 2d).`);
    expect(e.next).toBe('Nothing to do: it wakes by itself. To stop it: `tranquil runs cancel r1`.');
  });

  it('waiting for a signal: since when, and its timeout', () => {
    const wait: StepView = { seq: 0, name: 'approve', kind: 'wait', status: 'waiting', attempts: 1, startedAt: '2026-03-28T07:55:00.000Z', wakeAt: '2026-03-28T09:00:00.000Z' };
    const e = explain(run('waiting', [wait]), NOW);
    expect(e.summary).toBe(`${head} is waiting in step 'approve' for signal 'approve', timing out at 2026-03-28T09:00:00.000Z (in 1h); waiting since 2026-03-28T07:55:00.000Z.`);
    expect(e.next).toBe("Send the signal: `tranquil signal r1 approve --data '<json>'`.");
    const forever = explain(run('waiting', [{ ...wait, name: 'approve#1', wakeAt: undefined }]), NOW);
    expect(forever.summary).toBe(`${head} is waiting in step 'approve#1' for signal 'approve', with no timeout; waiting since 2026-03-28T07:55:00.000Z.`);
  });

  it('retrying: attempt n of m, when it runs, and the last error', () => {
    const step: StepView = { seq: 0, name: 'call', kind: 'do', status: 'retrying', attempts: 2, error: { name: 'Error', message: 'remote 503' }, nextRetryAt: '2026-03-28T08:00:30.000Z', retryLimit: 5 };
    const e = explain(run('retrying', [step]), NOW);
    expect(e.summary).toBe(`${head} is retrying step 'call': attempt 3 of 5 at 2026-03-28T08:00:30.000Z (in 30s); last error (attempt 2): Error: remote 503.`);
    expect(e.next).toBe('Nothing to do: the next attempt runs by itself. To stop it: `tranquil runs cancel r1`.');
    expect(e.details).toEqual(["step 1 'call' attempt 2 of 5 failed (Error: remote 503); next attempt at 2026-03-28T08:00:30.000Z"]);
    // A step journaled before the limit was recorded: said, not guessed from today's code.
    const old = explain(run('retrying', [{ ...step, retryLimit: undefined }]), NOW);
    expect(old.summary).toBe(`${head} is retrying step 'call': attempt 3 (its retry limit was not recorded) at 2026-03-28T08:00:30.000Z (in 30s); last error (attempt 2): Error: remote 503.`);
  });

  it('pending: the engine picks it up; with no engine running: what starting one will do', () => {
    expect(explain(run('pending', []), NOW).summary).toBe(`${head} is pending: created at 2026-03-28T07:00:00.000Z, not yet picked up by the engine.`);
    const e = explain(run('pending', []), NOW, { state: 'none' });
    expect(e.summary).toBe(
      `${head} is pending because no engine is running on this data dir (created at 2026-03-28T07:00:00.000Z). ` +
        'The next engine to start picks it up, and catches up every timer and schedule slot that came due while none ran.',
    );
    expect(e.next).toBe('Start one: `tranquil serve` (or the app that embeds the engine).');
  });

  it('held by an engine that stopped answering', () => {
    const e = explain(run('running', [ok(0, 'a')]), NOW, { state: 'stale', pid: 4242, host: 'box', heartbeatAt: '2026-03-28T07:58:00.000Z' });
    expect(e.summary).toBe(
      `${head} is running, held by an engine that stopped answering (pid 4242 on box, last heartbeat at 2026-03-28T07:58:00.000Z (2m ago)). ` +
        "The next engine to start on this data dir takes it over and resumes the run from its last recorded step 'a' (succeeded).",
    );
    expect(e.next).toBe('If pid 4242 on box is hung, stop it by its pid, then start an engine: `tranquil serve`; the run resumes with the same idempotency keys.');
    // An alive owner changes nothing: the CLI then says what the engine API says.
    expect(explain(run('running', [ok(0, 'a')]), NOW, { state: 'alive', pid: 1 })).toEqual(explain(run('running', [ok(0, 'a')]), NOW));
  });

  it('blocked by a changed declaration: the diff, docs/runner.md and the approve command', () => {
    const error = {
      name: 'ApprovalRequired', message: "workflow 'wf' (declaration 0123456789abcdef): net.fetch added; approve with: tranquil workflows approve wf",
      fields: { added: ['net:api.example.com'], removed: [], approve: 'tranquil workflows approve wf' },
    };
    const e = explain(run('blocked', [], { error }), NOW);
    expect(e.summary).toBe(`${head} is blocked until its permission declaration is approved: ${error.message}`);
    expect(e.details.slice(0, 3)).toEqual(['added: net:api.example.com', 'removed: nothing', 'approve with: tranquil workflows approve wf']);
    expect(e.next).toBe('Review the change (docs/runner.md, Approval), then approve it: `tranquil workflows approve wf`; the run starts.');
  });

  it('failed at a step after n attempts, and the retry command', () => {
    const step: StepView = { seq: 1, name: 'send', kind: 'do', status: 'failed', attempts: 3, error: { name: 'Error', message: 'smtp 451' } };
    const e = explain(run('failed', [ok(0, 'a'), step], { error: { name: 'Error', message: 'smtp 451' } }), NOW);
    expect(e.summary).toBe(
      `${head} failed: step 'send' failed on attempt 3 with Error: smtp 451. ` +
        "runs.retry resumes it from step 'send' and discards 1 recorded step ('send'); 'send' runs again with the same idempotency key.",
    );
    expect(e.failedStep).toEqual({ name: 'send', attempts: 3, error: { name: 'Error', message: 'smtp 451' } });
    expect(e.next).toBe('Fix the cause, then resume it: `tranquil runs retry r1`.');
  });

  it('non-determinism: the position, what the code calls and what the journal recorded', () => {
    const error = { name: 'NonDeterminismError', message: "run r1 diverged from its journal at position 1: code now calls do('b'), journal recorded do('c')" };
    const e = explain(run('failed', [ok(0, 'a'), ok(1, 'c')], { error }), NOW);
    expect(e.summary).toBe(
      `${head} failed with non-determinism at position 1: the code now calls do('b'), the journal recorded do('c'). The code changed under a run that was in flight.`,
    );
    expect(e.next).toBe('Run it with the code of version v1 (deploy that version back), or see its journal: `tranquil runs describe r1`.');
  });

  it('cancelled: when, and the step the cancel reached', () => {
    const hit: StepView = { seq: 1, name: 'pause', kind: 'sleep', status: 'failed', attempts: 1, error: { name: 'CancelledError', message: 'run r1 was cancelled' } };
    const e = explain(run('cancelled', [ok(0, 'a'), hit]), NOW);
    expect(e.summary).toBe(`${head} was cancelled at 2026-03-28T07:30:00.000Z after 1 completed step; the cancel reached it in step 'pause'; who asked is not recorded.`);
    // docs/control.md: a cancelled run can be continued or run anew.
    expect(e.next).toBe('To continue it from where it stopped: `tranquil runs resume r1`; to start it anew: `tranquil runs rerun r1`.');
  });

  it('cancelled: by whom and when it was asked, and when it ended', () => {
    const hit: StepView = { seq: 1, name: 'pause', kind: 'sleep', status: 'failed', attempts: 1, error: { name: 'CancelledError', message: 'run r1 was cancelled' } };
    const later = explain(run('cancelled', [ok(0, 'a'), hit], { cancel: { by: 'panel', at: '2026-03-28T07:29:58.000Z' } }), NOW);
    expect(later.summary).toBe(`${head} was cancelled by panel at 2026-03-28T07:29:58.000Z and ended at 2026-03-28T07:30:00.000Z after 1 completed step; the cancel reached it in step 'pause'.`);
    const atOnce = explain(run('cancelled', [ok(0, 'a')], { cancel: { by: 'cli (ann@box)', at: '2026-03-28T07:30:00.000Z' } }), NOW);
    expect(atOnce.summary).toBe(`${head} was cancelled by cli (ann@box) at 2026-03-28T07:30:00.000Z after 1 completed step.`);
  });

  it('parked: the capability and affinity it waits for, and how to provide it', () => {
    const parked: StepView = {
      seq: 0, name: 'browser.scrape', kind: 'use', status: 'parked', attempts: 0,
      error: { name: 'CapabilityUnavailableError', message: "no provider of capability 'browser.scrape' matching partition=work is registered", fields: { capability: 'browser.scrape', affinity: { partition: 'work' } } },
    };
    const e = explain(run('parked', [parked]), NOW);
    expect(e.summary).toBe(`${head} is parked in step 'browser.scrape': it waits for a provider of capability 'browser.scrape' matching partition=work; it resumes as soon as one is provided (engine.capabilities.provide).`);
    expect(e.next).toBe('Provide it in the app: `engine.capabilities.provide(\'browser.scrape\', {"partition":"work"}, handler)` (or `capabilities.provide` on an attach() handle). To stop it: `tranquil runs cancel r1`.');
  });

  it('succeeded', () => {
    const e = explain(run('succeeded', [ok(0, 'a'), ok(1, 'b')]), NOW);
    expect(e.summary).toBe(`${head} succeeded after 2 completed steps, at 2026-03-28T07:30:00.000Z.`);
    expect(e.next).toBe('Nothing to do. Its output and steps: `tranquil runs describe r1`.');
  });

  it('a sleeping run with no engine: it goes on when one starts', () => {
    const e = explain(run('sleeping', [{ seq: 0, name: 'pause', kind: 'sleep', status: 'sleeping', attempts: 1, wakeAt: '2026-03-28T07:59:00.000Z' }]), NOW, { state: 'none' });
    expect(e.summary).toBe(
      `${head} is sleeping in step 'pause' until 2026-03-28T07:59:00.000Z (due now). No engine is running on this data dir: it goes on when one starts (what came due meanwhile runs at start-up).`,
    );
  });

  it('schedules: slots missed and skipped, and why', () => {
    const e = explainSchedules('report', [{ cron: '0 9 * * *', timezone: 'UTC', nextAt: '2026-03-29T09:00:00.000Z' }], [
      { slot: '2026-03-26T09:00:00.000Z', fate: 'skipped', reason: "older than the catch-up cap of catchUp 'all'", count: 1 },
      { slot: '2026-03-27T09:00:00.000Z', fate: 'missed', reason: "the engine was not running; catchUp 'none'", count: 1 },
    ]);
    expect(e.summary).toBe("Workflow 'report': last slot 2026-03-27T09:00:00.000Z was missed: the engine was not running; catchUp 'none'.");
    expect(e.details).toEqual([
      "schedule '0 9 * * *' (UTC) of workflow 'report'; next slot 2026-03-29T09:00:00.000Z",
      "slot 2026-03-26T09:00:00.000Z: skipped (older than the catch-up cap of catchUp 'all')",
      "slot 2026-03-27T09:00:00.000Z: missed (the engine was not running; catchUp 'none')",
    ]);
  });
});
