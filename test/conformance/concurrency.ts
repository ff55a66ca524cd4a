// Conformance scenarios for concurrency inside one run (fan-out, fan-in, races), called from
// runConformance(): the same results on every backend, first execution and replay alike.
import { expect } from 'vitest';
import { manual, TimeoutError, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function concurrencyScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('Promise.all of step.do that finish in reverse order: each result to its own call', async () => {
    const wf = workflow('fan-out', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const got = await Promise.all([0, 1, 2, 3, 4].map((i) => step.do(`item-${i}`, async () => (await pause((5 - i) * 40), i * 10))));
        await step.sleep('nap', 50); // forces a replay of the fan-out
        return got;
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('fan-out', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual([0, 10, 20, 30, 40]);
    // Journal positions follow call order, whatever the completion order.
    expect(view.steps.map((s) => s.name)).toEqual(['item-0', 'item-1', 'item-2', 'item-3', 'item-4', 'nap']);
  });

  test('Promise.race of a wait and a sleep: the signal wins, the run succeeds', async () => {
    const wf = workflow('race-wait', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const winner = await Promise.race([
          step.waitForEvent<string>('go', { timeout: '3s' }).then((v) => `signal ${v}`),
          step.sleep('t', '5s').then(() => 'slept'),
        ]);
        return winner;
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('race-wait', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await pause(300);
    await engine.signal(runId, 'go', 'hi');
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('signal hi');
  });

  test('Promise.race of a wait and a sleep: the sleep wins when no signal comes', async () => {
    const wf = workflow('race-sleep', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const winner = await Promise.race([
          step.waitForEvent<string>('go').then((v) => `signal ${v}`),
          step.sleep('t', 300).then(() => 'slept'),
        ]);
        const after = await step.do('after', () => 'done');
        return { winner, after };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('race-sleep', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ winner: 'slept', after: 'done' });
  });

  test('Promise.all of two step.do, then a sleep; Promise.allSettled keeps each outcome', async () => {
    const wf = workflow('all-settled', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const [a, b] = await Promise.all([step.do('a', () => 'A'), step.do('b', () => 'B')]);
        await step.sleep('nap', 50);
        const settled = await Promise.allSettled([
          step.do('ok', () => 1),
          step.do('bad', { retries: { limit: 1 } }, () => {
            throw new Error('nope');
          }),
        ]);
        return { a, b, settled: settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)) };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('all-settled', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 'A', b: 'B', settled: [1, 'nope'] });
  });

  test('two sleeps in parallel suspend durably and wake on the due one, across a restart', async () => {
    const wf = workflow('two-sleeps', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const first = await Promise.race([step.sleep('short', 400).then(() => 'short'), step.sleep('long', 60_000).then(() => 'long')]);
        return first;
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('two-sleeps', null);
    await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    const again = await restart(engine, [wf], dir);
    const view = await again.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('short');
  });

  test('an unawaited step still runs once and is recorded before the run ends', async () => {
    let sent = 0;
    const wf = workflow('unawaited', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('first', () => 1);
        void step.do('send-email', async () => (await pause(100), ++sent));
        return 'done';
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('unawaited', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('done');
    await pause(300);
    expect(sent).toBe(1);
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([['first', 'succeeded'], ['send-email', 'succeeded']]);
  });

  test('a wait with a timeout raced against a longer sleep times out with TimeoutError', async () => {
    const wf = workflow('race-timeout', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await Promise.race([step.waitForEvent('go', { timeout: 200 }), step.sleep('t', 60_000)]);
          return 'no timeout';
        } catch (err) {
          return err instanceof TimeoutError ? 'timed out' : `other: ${(err as Error).message}`;
        }
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('race-timeout', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('timed out');
  });

  test('a void step gives undefined, on first execution and on replay', async () => {
    const wf = workflow('void-step', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const first = await step.do('nothing', () => {});
        await step.sleep('nap', 50);
        const again = await step.do('nothing-async', async () => undefined);
        return { first: first === undefined, again: again === undefined, nul: (await step.do('null', () => null)) === null };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('void-step', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.output).toEqual({ first: true, again: true, nul: true });
  });
}
