// Concurrency, cancel-with-cleanup, retry and limit cases THROUGH THE RUNNER: cases of the
// in-process suite's scenario files (concurrency.ts, semantics-cancel.ts, semantics-retry.ts,
// semantics-fields.ts, semantics-signals.ts) of the same names, workflows as files.
import { expect } from 'vitest';
import { OUT_PERMISSIONS, sleep, until } from './harness.ts';
import type { FileKit } from './suite.ts';

const P = `{ permissions: ${OUT_PERMISSIONS} }`;

export function moreFileScenarios({ test, boot }: FileKit): void {
  // why-asker.ts: the retrying step's limit comes from the child's session, over the runner protocol.
  test('why: a retrying run says attempt n of m, when, and the last error', async () => {
    const rig = await boot([`
export default workflow('why-limit', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) =>
    step.do('call', { retries: { limit: 4, delay: '1h', backoff: 'constant', jitter: false } }, () => {
      throw new Error('remote 503');
    }));
});`, `
export default workflow('why-default-limit', ${P}, (w) => {
  w.trigger(manual());
  w.defaults({ retries: { delay: '1h' } });
  w.run(async ({ step }) =>
    step.do('fetch', () => {
      throw new Error('timeout');
    }));
});`]);
    const e = rig.engine;
    const a = (await e.trigger('why-limit', null)).runId;
    const b = (await e.trigger('why-default-limit', null)).runId;
    await until('both runs to be retrying', async () => (await e.runs.get(a)).status === 'retrying' && (await e.runs.get(b)).status === 'retrying');
    const va = await e.runs.get(a);
    expect(va.steps[0]).toMatchObject({ name: 'call', status: 'retrying', attempts: 1, retryLimit: 4 });
    const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
    const ea = (await e.runs.explain(a)).summary.replace(/ \((in [^)]*|due now)\)/g, '');
    expect(ea).toMatch(new RegExp(`^Run ${a} of workflow 'why-limit' \\(version ${va.version}\\) is retrying step 'call': attempt 2 of 4 at ${ISO}; last error \\(attempt 1\\): Error: remote 503\\.$`));
    expect((await e.runs.get(b)).steps[0]).toMatchObject({ name: 'fetch', status: 'retrying', attempts: 1, retryLimit: 3 });
    expect((await e.runs.explain(b)).summary).toMatch(/is retrying step 'fetch': attempt 2 of 3 at .*; last error \(attempt 1\): Error: timeout\.$/);
  });

  test('Promise.all of step.do that finish in reverse order: each result to its own call', async () => {
    const rig = await boot(`
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
export default workflow('fan-out', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const got = await Promise.all([0, 1, 2, 3, 4].map((i) => step.do('item-' + i, async () => (await pause((5 - i) * 40), i * 10))));
    await step.sleep('nap', 50); // a new child replays the fan-out
    return got;
  });
});`);
    const { runId } = await rig.engine.trigger('fan-out', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual([0, 10, 20, 30, 40]);
    expect(view.steps.map((s) => s.name)).toEqual(['item-0', 'item-1', 'item-2', 'item-3', 'item-4', 'nap']);
  });

  test('Promise.race of a wait and a sleep: the signal wins, the run succeeds', async () => {
    const rig = await boot(`
export default workflow('race-wait', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => Promise.race([
    step.waitForEvent('go', { timeout: '20s' }).then((v) => 'signal ' + v),
    step.sleep('t', '30s').then(() => 'slept'),
  ]));
});`);
    const { runId } = await rig.engine.trigger('race-wait', null);
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    await rig.engine.signal(runId, 'go', 'hi');
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('signal hi');
  });

  test('Promise.race of two step.do: the later call finishes first and wins, also on replay', async () => {
    const rig = await boot(`
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
export default workflow('race-do', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const first = await Promise.race([
      step.do('slow', async () => (await pause(400), 'slow')),
      step.do('fast', async () => (await pause(20), 'fast')),
    ]);
    hit('seen', first + '\\n');
    await step.sleep('nap', 50); // the next child replays the race
    return { first };
  });
});`);
    const { runId } = await rig.engine.trigger('race-do', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    // Before: on Restate the two `attempt` frames reached the engine in different turns and
    // the SDK ran 'fast' only after 'slow' ended (driver.ts: a newcomer interrupts the race).
    expect(view.output).toEqual({ first: 'fast' });
    // Every child that ran the code (first execution and each replay) saw the same winner.
    const seen = rig.text('seen').split('\n').filter(Boolean);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen)).toEqual(new Set(['fast']));
  });

  test('an unawaited step still runs once and is recorded before the run ends', async () => {
    const rig = await boot(`
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
export default workflow('unawaited', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('first', () => 1);
    void step.do('send-email', async () => (await pause(100), hit('sent'), 1));
    return 'done';
  });
});`);
    const { runId } = await rig.engine.trigger('unawaited', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('done');
    await sleep(300);
    expect(rig.hits('sent')).toBe(1);
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([['first', 'succeeded'], ['send-email', 'succeeded']]);
  });

  test('a step body gets an AbortSignal, aborted when its attempt times out and when the run is cancelled', async () => {
    const rig = await boot(`
export default workflow('abortable', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => step.do('wait', { timeout: input.timeout, retries: { limit: 1 } }, ({ signal }) =>
    new Promise((_, reject) => {
      hit('started');
      signal.addEventListener('abort', () => { hit('aborted', (signal.reason?.name ?? 'none') + '\\n'); reject(signal.reason); });
    })));
});`);
    const timedOut = await rig.engine.result((await rig.engine.trigger('abortable', { timeout: 100 })).runId, { timeout: '60s' });
    expect(timedOut.status).toBe('failed');
    expect(timedOut.error?.name).toBe('TimeoutError');
    const { runId } = await rig.engine.trigger('abortable', { timeout: 60_000 });
    await until('second body to start', () => rig.hits('started') >= 2);
    await rig.engine.runs.cancel(runId);
    expect((await rig.engine.result(runId, { timeout: '60s' })).status).toBe('cancelled');
    await until('abort reasons', () => rig.text('aborted').split('\n').filter(Boolean).length >= 2);
    expect(rig.text('aborted').split('\n').filter(Boolean)).toEqual(['TimeoutError', 'RunStateError']);
  });

  test('cancel throws CancelledError into a sleeping, a waiting and an executing run; cleanup steps run, then it ends cancelled', async () => {
    const rig = await boot(`
export default workflow('cleanup', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const hold = await step.do('reserve', () => 'hold-' + input);
    try {
      if (input === 'sleep') await step.sleep('wait-a-day', '1d');
      else if (input === 'wait') await step.waitForEvent('approve');
      else await step.do('work', ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))));
      return 'not cancelled';
    } catch (err) {
      await step.do('release', { retries: { limit: 3, delay: 10, backoff: 'constant', jitter: false } }, ({ attempt }) => {
        if (attempt === 1) throw new Error('flaky release');
        hit('released', hold + ':' + (err instanceof CancelledError) + '\\n');
        return 'released';
      });
      throw err;
    }
  });
});`);
    for (const kind of ['sleep', 'wait', 'work']) {
      const { runId } = await rig.engine.trigger('cleanup', kind);
      await until(`${kind} run to reach its step`, async () => (await rig.engine.runs.get(runId)).steps.length >= (kind === 'work' ? 1 : 2));
      await sleep(150);
      await rig.engine.runs.cancel(runId);
      const view = await rig.engine.result(runId, { timeout: '60s' });
      expect(view.status, kind).toBe('cancelled');
      const byName = new Map(view.steps.map((s) => [s.name, s]));
      const waited = byName.get(kind === 'sleep' ? 'wait-a-day' : kind === 'wait' ? 'approve' : 'work');
      expect(waited, kind).toMatchObject({ status: 'failed', error: { name: 'CancelledError' } });
      expect(byName.get('release'), kind).toMatchObject({ status: 'succeeded', attempts: 2, result: 'released' });
    }
    expect(rig.text('released').split('\n').filter(Boolean)).toEqual(['hold-sleep:true', 'hold-wait:true', 'hold-work:true']);
  });

  test('retry of a saga that compensated and rethrew runs the failed step again and discards the compensation', async () => {
    const rig = await boot(`
export default workflow('saga-retry', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const hold = await step.do('reserve', () => 'h-1');
    let paid;
    try {
      paid = await step.do('charge', { retries: { limit: 1 } }, () => {
        hit('charges');
        if (read('healthy') !== 'yes') throw new Error('card service down');
        return 'paid';
      });
    } catch (e) {
      await step.do('release', () => (hit('releases'), read('releases').length));
      throw e;
    }
    return { hold, paid };
  });
});`);
    const { runId } = await rig.engine.trigger('saga-retry', null);
    const failed = await rig.engine.result(runId, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    expect(failed.steps.map((s) => [s.name, s.status])).toEqual([['reserve', 'succeeded'], ['charge', 'failed'], ['release', 'succeeded']]);
    const why = (await rig.engine.runs.explain(runId)).summary;
    rig.put('healthy', 'yes');
    const retried = await rig.engine.runs.retry(runId);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ hold: 'h-1', paid: 'paid' });
    expect([rig.hits('charges'), rig.hits('releases')]).toEqual([2, 1]);
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

  test('a step result over the size limit fails that step once, naming the step and the size: caught, the run goes on; uncaught, the run fails', async () => {
    const rig = await boot(`
export default workflow('too-big', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const big = () => step.do('huge', { retries: { limit: 3, delay: 10 } }, () => (hit('huge'), 'x'.repeat(5000)));
    if (!input?.catch) return big();
    try {
      await big();
    } catch (err) {
      return 'caught ' + err.name + ': ' + err.message;
    }
  });
});`, { maxPayloadBytes: 4096 });
    const view = await rig.engine.result((await rig.engine.trigger('too-big', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('failed');
    expect(view.error?.name).toBe('SerializationError');
    expect(view.error?.message).toMatch(/^result of step 'huge' is 5002 bytes of JSON \(.*\), over the limit of 4096 bytes \(.*engine config maxPayloadBytes\)$/);
    expect(view.steps.find((s) => s.name === 'huge')).toMatchObject({ status: 'failed', attempts: 1 });
    expect(rig.hits('huge')).toBe(1);
    const caught = await rig.engine.result((await rig.engine.trigger('too-big', { catch: true })).runId, { timeout: '60s' });
    expect(caught.status).toBe('succeeded');
    expect(caught.output).toMatch(/^caught SerializationError: result of step 'huge' is 5002 bytes of JSON/);
    expect(rig.hits('huge')).toBe(2);
  });

  test('20 signals sent at once to a waiting run: each consumed once, in one order that replay keeps', async () => {
    const rig = await boot(`
export default workflow('many-signals', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const got = [];
    for (let i = 0; i < 20; i++) got.push(await step.waitForEvent('n', { timeout: '60s' }));
    await step.sleep('nap', 50);
    return got;
  });
});`);
    const { runId } = await rig.engine.trigger('many-signals', null);
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    await Promise.all(Array.from({ length: 20 }, (_, i) => rig.engine.signal(runId, 'n', i)));
    const view = await rig.engine.result(runId, { timeout: '90s' });
    expect(view.status).toBe('succeeded');
    const got = view.output as number[];
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(view.steps.filter((s) => s.kind === 'wait').map((s) => s.result)).toEqual(got);
  }, 150_000);
}
