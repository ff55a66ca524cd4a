// Conformance scenarios for the signal-order rule (docs/semantics.md, Signals; issue 38):
// signals of one name are taken by the run's waits of that name in the order they were sent,
// the earliest open wait first. Simulation seeds 902656 and 952078 broke it: a wait still
// open (it had looked and found nothing) was passed by a later wait of its name whose
// deadline had already passed, which took a signal sent after the earlier one looked. On
// Restate, where each wait reserves a signal slot when it first looks, the same later wait
// reserved the slot an earlier wait held back without looking was owed (the three-wait case).
//
// Each scenario sends signals from a step body, so they arrive while the run executes, at a
// known point of its code. A short wait with `timeout: 0` placed before the send makes sure
// the earlier waits of the name have looked (its look comes after theirs, in call order).
import { expect } from 'vitest';
import { manual, workflow, TerminalError } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import type { Json } from '../../src/domain/json.ts';
import type { ScenarioKit } from './triggers.ts';

/** The error's name, or the value: what a wait gave the code. */
const outcome = (p: Promise<Json>): Promise<Json> => p.then((v) => v, (e: unknown) => (e as Error).name);

export function signalOrderScenarios({ test, boot, until }: ScenarioKit): void {
  test('a wait past its deadline does not take a signal an earlier open wait of its name is owed', async () => {
    let engine!: Engine;
    const wf = workflow('order-due', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const a = outcome(step.waitForEvent('approve', { timeout: '8s' })); // looks, finds nothing, stays open
        const c = outcome(step.waitForEvent('approve', { timeout: '8s' })); // held behind a
        const held = await outcome(step.waitForEvent('approve', { timeout: 0 }));
        await step.do('send', async () => {
          await engine.signal(ctx.runId, 'approve', 'one');
          await engine.signal(ctx.runId, 'approve', 'two');
        });
        // Due at once, while a and c are still open: the two signals are theirs.
        const b = await outcome(step.waitForEvent('approve', { timeout: 0 }));
        return { a: await a, c: await c, held, b };
      });
    });
    engine = (await boot([wf])).engine;
    const { runId } = await engine.trigger('order-due', null);
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 'one', c: 'two', held: 'TimeoutError', b: 'TimeoutError' });
    // The journal says the same: each wait recorded what the code saw.
    const waits = view.steps.filter((s) => s.kind === 'wait').map((s) => [s.name, s.status, s.result ?? null]);
    expect(waits).toEqual([
      ['approve', 'succeeded', 'one'],
      ['approve#2', 'succeeded', 'two'],
      ['approve#3', 'timedout', null],
      ['approve#4', 'timedout', null],
    ]);
  }, 60_000);

  test('of two open waits of a name, the first times out: the next signal goes to the second', async () => {
    let engine!: Engine;
    const wf = workflow('order-first-times-out', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const a = outcome(step.waitForEvent('approve', { timeout: 300 }));
        const b = outcome(step.waitForEvent('approve', { timeout: '8s' }));
        const first = await a;
        await step.do('send', () => engine.signal(ctx.runId, 'approve', 'one'));
        const later = outcome(step.waitForEvent('approve', { timeout: 300 }));
        return { first, second: await b, later: await later };
      });
    });
    engine = (await boot([wf])).engine;
    const { runId } = await engine.trigger('order-first-times-out', null);
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ first: 'TimeoutError', second: 'one', later: 'TimeoutError' });
  }, 60_000);

  test('an open wait of another name does not hold a due wait back from its own signal', async () => {
    let engine!: Engine;
    const wf = workflow('order-names', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const a = outcome(step.waitForEvent('approve', { timeout: '8s' }));
        const held = await outcome(step.waitForEvent('approve', { timeout: 0 }));
        await step.do('send', async () => {
          await engine.signal(ctx.runId, 'reply', 'r1');
          await engine.signal(ctx.runId, 'approve', 'a1');
        });
        const b = await outcome(step.waitForEvent('reply', { timeout: 0 }));
        return { a: await a, held, b };
      });
    });
    engine = (await boot([wf])).engine;
    const { runId } = await engine.trigger('order-names', null);
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 'a1', held: 'TimeoutError', b: 'r1' });
  }, 60_000);

  test('a wait that timed out between two signals takes neither: the next wait of the name gets the second', async () => {
    let engine!: Engine;
    const wf = workflow('order-timeout', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const first = await outcome(step.waitForEvent('approve', { timeout: '8s' }));
        const mid = await outcome(step.waitForEvent('approve', { timeout: 0 }));
        await step.do('send', () => engine.signal(ctx.runId, 'approve', 'two'));
        const last = await outcome(step.waitForEvent('approve', { timeout: '8s' }));
        return { first, mid, last };
      });
    });
    engine = (await boot([wf])).engine;
    const { runId } = await engine.trigger('order-timeout', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting', 20_000);
    await engine.signal(runId, 'approve', 'one');
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ first: 'one', mid: 'TimeoutError', last: 'two' });
  }, 60_000);

  test('a retry between two signals keeps their order: the open waits take them, a later due wait neither', async () => {
    let engine!: Engine;
    const state = { healthy: false };
    const wf = workflow('order-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const a = outcome(step.waitForEvent('approve', { timeout: '8s' }));
        const c = outcome(step.waitForEvent('approve', { timeout: '8s' }));
        const held = await outcome(step.waitForEvent('approve', { timeout: 0 }));
        await step.do('send', () => engine.signal(ctx.runId, 'approve', 'one'));
        // Fails the first time, with a and c open and 'one' not taken.
        await step.do('check', { retries: { limit: 1 } }, () => {
          if (!state.healthy) throw new TerminalError('not ready');
        });
        // After the retry: a took 'one', c looked and found nothing, then 'two' comes.
        await step.do('send-more', () => engine.signal(ctx.runId, 'approve', 'two'));
        const b = await outcome(step.waitForEvent('approve', { timeout: 0 }));
        return { a: await a, c: await c, held, b };
      });
    });
    engine = (await boot([wf])).engine;
    const { runId } = await engine.trigger('order-retry', null);
    expect((await engine.result(runId, { timeout: '30s' })).status).toBe('failed');
    state.healthy = true;
    const retried = await engine.runs.retry(runId);
    expect(retried.from?.name).toBe('check');
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 'one', c: 'two', held: 'TimeoutError', b: 'TimeoutError' });
  }, 60_000);

  test('a wait the cancel ended is no longer open: a cleanup wait of its name takes the next signal', async () => {
    let engine!: Engine;
    const wf = workflow('order-cancel', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        try {
          return await step.waitForEvent('approve');
        } catch (err) {
          // Cleanup: the wait above got the CancelledError, so this one is first in line.
          await step.do('send', () => engine.signal(ctx.runId, 'approve', 'undo-ok'));
          await step.waitForEvent('approve', { timeout: 0 });
          throw err;
        }
      });
    });
    engine = (await boot([wf])).engine;
    const { runId } = await engine.trigger('order-cancel', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting', 20_000);
    await engine.runs.cancel(runId);
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('cancelled');
    expect(view.steps.filter((s) => s.kind === 'wait').map((s) => [s.name, s.status, s.result ?? s.error?.name])).toEqual([
      ['approve', 'failed', 'CancelledError'],
      ['approve#2', 'succeeded', 'undo-ok'],
    ]);
  }, 60_000);
}
