// Conformance scenarios for runs.retry (issue 19, defect 1; docs/semantics.md `## Retry`),
// called from runConformance(): a retry truncates the journal at the earliest failed `do`
// step (or at `{ from }`), says what it discarded, and hands the code fresh copies of input
// and results: the same outcome on every backend.
import { expect } from 'vitest';
import { manual, TimeoutError, workflow } from '@tranquil/sdk';
import { applyOp, describeRetry } from '../../cli/ops.ts';
import type { ScenarioKit } from './triggers.ts';

/** One attempt per step: a failure fails the step at once (no backoff to wait for). */
const once = { retries: { limit: 1 } } as const;

export function retryScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('retry of a saga that compensated and rethrew runs the failed step again and discards the compensation', async () => {
    const state = { healthy: false, charges: 0, releases: 0 };
    const wf = workflow('saga-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const hold = await step.do('reserve', () => 'h-1');
        let paid: string;
        try {
          paid = await step.do('charge', once, () => {
            state.charges++;
            if (!state.healthy) throw new Error('card service down');
            return 'paid';
          });
        } catch (e) {
          await step.do('release', () => ++state.releases);
          throw e;
        }
        return { hold, paid };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('saga-retry', null);
    const failed = await engine.result(runId, { timeout: '20s' });
    expect(failed.status).toBe('failed');
    expect(failed.steps.map((s) => [s.name, s.status])).toEqual([['reserve', 'succeeded'], ['charge', 'failed'], ['release', 'succeeded']]);
    // `why` on the failed run says what a retry would do, before anyone retries.
    const why = (await engine.runs.explain(runId)).summary;

    state.healthy = true;
    const retried = await engine.runs.retry(runId);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ hold: 'h-1', paid: 'paid' });
    expect(state).toEqual({ healthy: true, charges: 2, releases: 1 });
    // The discarded compensation is gone: the code did not reach it again.
    expect(view.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([['reserve', 'succeeded', 1], ['charge', 'succeeded', 1]]);
    expect(retried).toEqual({
      from: { seq: 1, name: 'charge' },
      discarded: [
        { seq: 1, name: 'charge', kind: 'do', status: 'failed' },
        { seq: 2, name: 'release', kind: 'do', status: 'succeeded' },
      ],
    });
    expect(why).toMatch(/runs\.retry resumes it from step 'charge' and discards 2 recorded steps \('charge', 'release'\)/);
  });

  test('a retried run that sleeps survives a restart: discarded steps stay discarded, no body runs twice', async () => {
    const state = { healthy: false, a: 0, b: 0, undo: 0, c: 0 };
    const wf = workflow('retry-restart', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const a = await step.do('a', () => ++state.a);
        let b: string;
        try {
          b = await step.do('b', once, () => {
            state.b++;
            if (!state.healthy) throw new Error('not yet');
            return 'B';
          });
        } catch (e) {
          await step.do('undo', () => ++state.undo);
          throw e;
        }
        await step.sleep('nap', 400);
        const c = await step.do('c', () => ++state.c);
        return { a, b, c };
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('retry-restart', null);
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('failed');
    state.healthy = true;
    await engine.runs.retry(runId);
    await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping', 20_000);
    const second = await restart(engine, [wf], dir);
    const view = await second.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 1, b: 'B', c: 1 });
    expect(state).toEqual({ healthy: true, a: 1, b: 2, undo: 1, c: 1 });
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([['a', 'succeeded'], ['b', 'succeeded'], ['nap', 'succeeded'], ['c', 'succeeded']]);
  }, 60_000);

  test('retry of a run whose code wrapped the step error succeeds once the cause is fixed', async () => {
    const state = { healthy: false, calls: 0 };
    const wf = workflow('wrap-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          return await step.do('sync', once, () => {
            state.calls++;
            if (!state.healthy) throw new Error('remote 503');
            return 'synced';
          });
        } catch (e) {
          throw new Error(`sync failed: ${(e as Error).message}`);
        }
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('wrap-retry', null);
    const failed = await engine.result(runId, { timeout: '20s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ name: 'Error', message: 'sync failed: remote 503' });
    state.healthy = true;
    const retried = await engine.runs.retry(runId);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('synced');
    expect(state.calls).toBe(2);
    expect(retried.discarded.map((d) => d.name)).toEqual(['sync']);
  });

  test('every retry cycle hands workflow code fresh copies of input and recorded results', async () => {
    const state = { healthy: false };
    const wf = workflow('fresh-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const cart = await step.do('load-cart', () => ({ total: 100 }));
        cart.total += 10;
        input.seen++;
        await step.do('pay', once, () => {
          if (!state.healthy) throw new Error('payments down');
          return 'ok';
        });
        return { total: cart.total, seen: input.seen };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('fresh-retry', { seen: 0 });
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('failed');
    await engine.runs.retry(runId); // fails again: a second cycle of the same code
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('failed');
    state.healthy = true;
    await engine.runs.retry(runId);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ total: 110, seen: 1 });
    expect(view.input).toEqual({ seen: 0 });
    expect(view.steps.find((s) => s.name === 'load-cart')?.result).toEqual({ total: 100 });
  });

  test("retry { from } resumes at a named recorded step; an unknown name is refused and changes nothing", async () => {
    const state = { version: 1, healthy: false, fetches: 0, transforms: 0 };
    const wf = workflow('from-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const doc = await step.do('fetch', () => `doc-${++state.fetches}`);
        const shaped = await step.do('transform', () => `${doc}@v${(++state.transforms, state.version)}`);
        return step.do('publish', once, () => {
          if (!state.healthy) throw new Error('cdn refused');
          return `published ${shaped}`;
        });
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('from-retry', null);
    const failed = await engine.result(runId, { timeout: '20s' });
    expect(failed.status).toBe('failed');

    await expect(engine.runs.retry(runId, { from: 'nope' })).rejects.toThrow(`runs.retry: run ${runId} has no recorded step named 'nope'`);
    await expect(engine.runs.retry(runId, { from: '' })).rejects.toThrow(/from/);
    await expect(engine.runs.retry(runId, { frm: 'fetch' } as never)).rejects.toThrow(/frm/);
    const untouched = await engine.runs.get(runId);
    expect(untouched.status).toBe('failed');
    expect(untouched.steps).toEqual(failed.steps);

    state.version = 2;
    state.healthy = true;
    // Through the CLI's op (what `tranquil runs retry <id> --from transform` sends).
    const result = await applyOp(engine, { op: 'retry', runId, from: 'transform' });
    expect(result).toEqual({
      runId,
      from: { seq: 1, name: 'transform' },
      discarded: [
        { seq: 1, name: 'transform', kind: 'do', status: 'succeeded' },
        { seq: 2, name: 'publish', kind: 'do', status: 'failed' },
      ],
    });
    expect(describeRetry(result as Parameters<typeof describeRetry>[0])).toBe(
      `retrying ${runId} from step 'transform'; discarded 2 recorded steps:\n  [1] do 'transform' succeeded\n  [2] do 'publish' failed`,
    );
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('published doc-1@v2');
    expect(state).toMatchObject({ fetches: 1, transforms: 2 });
  });

  test('retry of a run that failed on a timed-out wait opens the wait again', async () => {
    const state = { timeoutMs: 100 };
    const wf = workflow('wait-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('ask', () => 'asked');
        // The timeout is read when the wait opens (recorded with it), never on replay.
        const answer = await step.waitForEvent<string>('approval', { timeout: state.timeoutMs });
        return step.do('apply', () => `applied ${answer}`);
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('wait-retry', null);
    const failed = await engine.result(runId, { timeout: '20s' });
    expect(failed.status).toBe('failed');
    expect(failed.error?.name).toBe(TimeoutError.name);
    state.timeoutMs = 120_000;
    const retried = await engine.runs.retry(runId);
    await until('run to suspend again', async () => !['pending', 'running'].includes((await engine.runs.get(runId)).status), 20_000);
    expect((await engine.runs.get(runId)).status).toBe('waiting');
    await engine.signal(runId, 'approval', 'yes');
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('applied yes');
    expect(retried).toEqual({
      from: { seq: 1, name: 'approval' },
      discarded: [{ seq: 1, name: 'approval', kind: 'wait', status: 'timedout' }],
    });
  });

  test('a signal taken by a discarded wait stays consumed: the wait reached again takes the next one', async () => {
    const state = { healthy: false };
    const wf = workflow('signal-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const got = await step.waitForEvent<number>('go');
        return step.do('use', once, () => {
          if (!state.healthy) throw new Error('not ready');
          return got;
        });
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('signal-retry', null);
    await engine.signal(runId, 'go', 1);
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('failed');
    state.healthy = true;
    const retried = await engine.runs.retry(runId, { from: 'go' });
    expect(retried.discarded.map((d) => [d.name, d.status])).toEqual([['go', 'succeeded'], ['use', 'failed']]);
    await until('run to suspend again', async () => !['pending', 'running'].includes((await engine.runs.get(runId)).status), 20_000);
    expect((await engine.runs.get(runId)).status).toBe('waiting');
    await engine.signal(runId, 'go', 2);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe(2);
  });

  test('retry of a run that failed in code outside any step replays it and discards nothing', async () => {
    const state = { broken: true, calls: 0 };
    const wf = workflow('code-retry', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const n = await step.do('count', () => ++state.calls);
        if (state.broken) throw new RangeError('bad arithmetic');
        return n;
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('code-retry', null);
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('failed');
    state.broken = false;
    const retried = await engine.runs.retry(runId);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe(1);
    expect(state.calls).toBe(1);
    expect(retried).toEqual({ discarded: [] });
  });

  test('retries.delay as a function of the attempt and its error sets each wait; maxAttempts counts every attempt', async () => {
    const waits: string[] = [];
    let calls = 0;
    const wf = workflow('delay-fn', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('call', { retries: { maxAttempts: 3, delay: (attempt, error) => (waits.push(`${attempt}:${error.name}:${(error as Error & { status?: number }).status}`), attempt * 40) } }, () => {
        calls++;
        throw Object.assign(new RangeError('busy'), { status: 503 });
      }));
    });
    const { engine } = await boot([wf]);
    const view = await engine.result((await engine.trigger('delay-fn', null)).runId, { timeout: '20s' });
    expect(view.status).toBe('failed');
    expect(calls).toBe(3);
    expect(waits).toEqual(['1:RangeError:503', '2:RangeError:503']);
    expect(view.steps[0]).toMatchObject({ status: 'failed', attempts: 3 });
  });
}
