// Run control cases THROUGH THE RUNNER (the in-process cases of the same names are in
// test/conformance/control.ts): rerun, resume of a cancelled run, pause and resume. A file's
// run child is told of a pause on every reply (and in hello), so its RunSession stops at the
// next step boundary as in-process (docs/control.md).
import { expect } from 'vitest';
import { OUT_PERMISSIONS, sleep, until } from './harness.ts';
import type { FileKit } from './suite.ts';

/** On SQLite only (files-restate-*.test.ts name why). */
export const PAUSE_BETWEEN_STEPS = 'a pause asked while the code awaits between two steps (no request in flight) is pushed to the child: it stops before its next step';

export function controlRunFileScenarios({ test, boot }: FileKit): void {
  test('rerun of a succeeded run starts a new run with its input, linked both ways; a live run is refused', async () => {
    const { engine, hits } = await boot(`
export default workflow('rerunnable', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    await step.do('count', () => void hit('count'));
    if ((input as { wait?: boolean }).wait) await step.waitForEvent('go');
    return { input };
  });
});`);
    const { runId } = await engine.trigger('rerunnable', { x: 1 });
    expect((await engine.result(runId, { timeout: '60s' })).output).toEqual({ input: { x: 1 } });
    const again = await engine.runs.rerun(runId, { runId: `${runId}-again` });
    expect(again).toEqual({ runId: `${runId}-again`, created: true });
    const view = await engine.result(again.runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ input: { x: 1 } });
    expect(hits('count')).toBe(2);
    expect((await engine.runs.get(again.runId)).rerunOf).toBe(runId);
    const old = await engine.runs.get(runId);
    expect(old.reruns).toEqual([again.runId]);
    expect(old.status).toBe('succeeded');
    expect((await engine.runs.explain(again.runId)).details).toContain(`rerun of run ${runId}`);
    const live = await engine.trigger('rerunnable', { wait: true });
    await until('the live run to wait', async () => (await engine.runs.get(live.runId)).status === 'waiting');
    await expect(engine.runs.rerun(live.runId)).rejects.toThrow(/is waiting; only a finished run \(succeeded, failed or cancelled\) can be rerun/);
    await engine.runs.cancel(live.runId);
  });

  test('resume of a cancelled run continues from where it stopped: recorded results reused, the cancelled step runs again', async () => {
    const { engine, hits } = await boot(`
export default workflow('continue-me', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('before', () => (hit('before'), 'a'));
    let go: unknown;
    try {
      go = await step.waitForEvent('go');
    } catch (err) {
      await step.do('undo', () => void hit('undo'));
      throw err;
    }
    const b = await step.do('after', () => (hit('after'), 'b'));
    return { a, go, b };
  });
});`);
    const { runId } = await engine.trigger('continue-me', null);
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.runs.cancel(runId);
    expect((await engine.result(runId, { timeout: '60s' })).status).toBe('cancelled');
    expect((await engine.runs.explain(runId)).next).toContain(`tranquil runs resume ${runId}`);
    const resumed = await engine.runs.resume(runId);
    expect(resumed).toMatchObject({ resumed: 'cancelled', from: { name: 'go' } });
    expect(resumed.discarded.map((d) => d.name)).toEqual(['go', 'undo']);
    await until('the resumed run to wait again', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.signal(runId, 'go', 'now');
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 'a', go: 'now', b: 'b' });
    expect([hits('before'), hits('undo'), hits('after')]).toEqual([1, 1, 1]);
    expect((await engine.runs.get(runId)).steps.map((s) => [s.name, s.status])).toEqual([['before', 'succeeded'], ['go', 'succeeded'], ['after', 'succeeded']]);
    await expect(engine.runs.resume(runId)).rejects.toThrow(/is succeeded; only a paused or a cancelled run can be resumed/);
  });

  test('pause during a running body: the body finishes and is recorded, the run is paused at the next step; resume goes on', async () => {
    const { engine, hits, open } = await boot(`
export default workflow('pausable', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const s = await step.do('slow', async () => {
      hit('slow');
      await gate('slow');
      return 'slow done';
    });
    const a = await step.do('after', () => (hit('after'), 1));
    return { s, a };
  });
});`);
    const { runId } = await engine.trigger('pausable', null);
    await until('the body to start', () => hits('slow') === 1);
    await engine.runs.pause(runId, { by: 'ops' });
    open('slow');
    await until('the run to be paused', async () => (await engine.runs.get(runId)).status === 'paused');
    const paused = await engine.runs.get(runId);
    expect(paused.steps.map((s) => [s.name, s.status, s.result])).toEqual([['slow', 'succeeded', 'slow done']]);
    expect(paused.paused?.by).toBe('ops');
    expect([hits('slow'), hits('after')]).toEqual([1, 0]);
    expect((await engine.runs.list({ status: 'paused' })).map((r) => r.runId)).toEqual([runId]);
    const why = await engine.runs.explain(runId);
    expect(why.summary).toContain(`is paused by ops at ${paused.paused!.at}; `);
    expect(await engine.runs.resume(runId)).toEqual({ resumed: 'paused', discarded: [] });
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ s: 'slow done', a: 1 });
    expect([hits('slow'), hits('after')]).toEqual([1, 1]);
    await expect(engine.runs.pause(runId)).rejects.toThrow(/already finished \(succeeded\); nothing to pause/);
  });

  test(PAUSE_BETWEEN_STEPS, async () => {
    const { engine, hits, open } = await boot(`
export default workflow('pause-between', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('before', () => 1);
    hit('between');
    await gate('between'); // a plain await between two steps: no request of the child in flight
    const b = await step.do('after', () => (hit('after'), 2));
    return { a, b };
  });
});`);
    const { runId } = await engine.trigger('pause-between', null);
    await until('the code to wait between the steps', () => hits('between') === 1);
    await engine.runs.pause(runId, { by: 'ops' });
    // The pause frame is on its way when pause() returns; the child has had time to read it.
    await sleep(500);
    open('between');
    await until('the run to be paused', async () => (await engine.runs.get(runId)).status === 'paused');
    // Stopped before 'after' (before the push it learned of the pause from the reply to 'after',
    // so that step ran first).
    expect(hits('after')).toBe(0);
    expect((await engine.runs.get(runId)).steps.map((s) => s.name)).toEqual(['before']);
    await engine.runs.resume(runId);
    expect((await engine.result(runId, { timeout: '60s' })).output).toEqual({ a: 1, b: 2 });
    expect(hits('after')).toBe(1);
  });

  test('timers due while paused fire on resume; a signal sent while paused waits; pause holds across a restart', async () => {
    const NAP_MS = 3000;
    const rig = await boot(`
export default workflow('paused-timers', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    if (input === 'sleep') await step.sleep('nap', ${NAP_MS});
    else await step.waitForEvent('go');
    await step.do('after', () => void hit('after-' + input));
    return 'done';
  });
});`);
    const { engine } = rig;
    const sleeper = await engine.trigger('paused-timers', 'sleep');
    const waiter = await engine.trigger('paused-timers', 'wait');
    await until('the sleeper to sleep', async () => (await engine.runs.get(sleeper.runId)).status === 'sleeping');
    const dueAt = Date.parse((await engine.runs.get(sleeper.runId)).wakeAt ?? '');
    expect(Number.isFinite(dueAt)).toBe(true);
    await engine.runs.pause(sleeper.runId);
    await until('the waiter to wait', async () => (await engine.runs.get(waiter.runId)).status === 'waiting');
    await engine.runs.pause(waiter.runId);
    await engine.signal(waiter.runId, 'go', 1);
    await sleep(Math.max(0, dueAt + 400 - Date.now())); // the nap came due while paused
    await until('the sleeper, due, to show paused', async () => (await engine.runs.get(sleeper.runId)).status === 'paused');
    expect((await engine.runs.get(waiter.runId)).status).toBe('paused');
    const again = await rig.restart();
    await sleep(300);
    expect((await again.runs.get(sleeper.runId)).status).toBe('paused');
    expect((await again.runs.get(waiter.runId)).status).toBe('paused');
    expect([rig.hits('after-sleep'), rig.hits('after-wait')]).toEqual([0, 0]);
    await again.runs.resume(sleeper.runId);
    await again.runs.resume(waiter.runId);
    expect((await again.result(sleeper.runId, { timeout: '60s' })).status).toBe('succeeded');
    expect((await again.result(waiter.runId, { timeout: '60s' })).status).toBe('succeeded');
    expect([rig.hits('after-sleep'), rig.hits('after-wait')]).toEqual([1, 1]);
  });

  test('a pause asked during a running body holds across a restart: the replayed run stops at the next step boundary', async () => {
    const rig = await boot(`
export default workflow('pause-crash', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('first', () => void hit('first'));
    await step.do('slow', async () => {
      hit('slow');
      await gate('slow');
    });
    await step.do('after', () => void hit('after'));
    return 'done';
  });
});`);
    const { runId } = await rig.engine.trigger('pause-crash', null);
    await until('the body to start', () => rig.hits('slow') === 1);
    await rig.engine.runs.pause(runId, { by: 'ops' });
    // The engine stops before the boundary: the body is interrupted, the pause is on the row.
    rig.open('slow');
    const again = await rig.restart();
    await until('the replayed run to be paused', async () => (await again.runs.get(runId)).status === 'paused');
    const paused = await again.runs.get(runId);
    expect(paused.paused?.by).toBe('ops');
    expect(rig.hits('after')).toBe(0);
    expect(paused.steps.map((s) => s.name)).not.toContain('after');
    await again.runs.resume(runId);
    expect((await again.result(runId, { timeout: '60s' })).status).toBe('succeeded');
    expect(rig.hits('first')).toBe(1);
    expect(rig.hits('after')).toBe(1);
  });

  test('a paused run can be cancelled (its cleanup runs); pause and resume refuse what they cannot do', async () => {
    const { engine } = await boot(`
export default workflow('pause-cancel', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await step.sleep('nap', '1d');
    } finally {
      await step.do('cleanup', () => 'cleaned');
    }
  });
});`);
    const { runId } = await engine.trigger('pause-cancel', null);
    await until('the run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    await expect(engine.runs.resume(runId)).rejects.toThrow(/is sleeping; only a paused or a cancelled run can be resumed/);
    await engine.runs.pause(runId);
    await engine.runs.pause(runId); // again: no change
    await engine.runs.cancel(runId);
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
    expect((await engine.runs.get(runId)).steps.map((s) => [s.name, s.status])).toEqual([['nap', 'failed'], ['cleanup', 'succeeded']]);
  });
}
