// Conformance scenarios for run control (issue 41, docs/control.md): a run deadline with
// cleanup, rerun and resume of finished runs, pause and resume of a live run. Called from
// runConformance(): the same on every backend.
import { expect } from 'vitest';
import { manual, TimeoutError, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function controlScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('run deadline: the run fails with TimeoutError after its cleanup, as after a cancel; why names the deadline', async () => {
    const wf = workflow('deadline', { timeout: '1h' }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.do('reserve', () => 'held');
          await step.sleep('long', '1d');
          return 'finished';
        } catch (err) {
          await step.do('release', () => `released:${err instanceof TimeoutError}`);
          throw err;
        }
      });
    });
    const { engine } = await boot([wf]);
    // The trigger's override wins over the workflow's hour.
    const before = Date.now();
    const { runId } = await engine.trigger('deadline', null, { timeout: 2000 });
    const after = Date.now();
    const ended = await engine.result(runId, { timeout: '20s' });
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatchObject({ name: 'TimeoutError' });
    expect(ended.error!.message).toMatch(/^run deadline /);
    const view = await engine.runs.get(runId);
    // Counted from the trigger (a backend may date createdAt from its own start of the run).
    expect(Date.parse(view.deadline!)).toBeGreaterThanOrEqual(before + 2000);
    expect(Date.parse(view.deadline!)).toBeLessThanOrEqual(after + 2000);
    // Normally the deadline reaches the sleep; on a machine slow enough it may reach the first
    // step already: either way one step gets it and the cleanup runs after it.
    const steps = view.steps.map((s) => [s.name, s.status, s.error?.name ?? s.result]);
    const hit = view.steps.find((s) => s.error?.name === 'TimeoutError')!;
    expect(['reserve', 'long']).toContain(hit.name);
    expect(steps.slice(-2)).toEqual([[hit.name, 'failed', 'TimeoutError'], ['release', 'succeeded', 'released:true']]);
    const why = await engine.runs.explain(runId);
    expect(why.summary).toContain(`deadline ${view.deadline}; timed out at ${view.updatedAt}`);
    expect(why.summary).toContain(`step '${hit.name}'`);
    // Without an override: the workflow's timeout, stored with the run.
    const t0 = Date.now();
    const other = await engine.trigger('deadline', null);
    const t1 = Date.now();
    await until('the other run to sleep', async () => (await engine.runs.get(other.runId)).status === 'sleeping');
    const o = await engine.runs.get(other.runId);
    expect(Date.parse(o.deadline!)).toBeGreaterThanOrEqual(t0 + 3_600_000);
    expect(Date.parse(o.deadline!)).toBeLessThanOrEqual(t1 + 3_600_000);
    expect((await engine.runs.explain(other.runId)).summary).toContain(`Deadline ${o.deadline} (in `);
    await engine.runs.cancel(other.runId);
  });

  test('run deadline survives a restart: a run whose deadline passes while no engine runs fails at start-up with its cleanup', async () => {
    const cleaned: string[] = [];
    const wf = workflow('deadline-restart', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.waitForEvent('approval');
          return 'approved';
        } finally {
          await step.do('cleanup', () => void cleaned.push('cleanup'));
        }
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('deadline-restart', null, { timeout: 5000 });
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    const deadline = Date.parse((await engine.runs.get(runId)).deadline!);
    await engine.stop();
    // The deadline passes while no engine runs.
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()) + 200));
    const again = await restart(engine, [wf], dir);
    const view = await again.result(runId, { timeout: '20s' });
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({ name: 'TimeoutError' });
    expect(cleaned).toEqual(['cleanup']);
    expect((await again.runs.get(runId)).steps.map((s) => [s.name, s.status])).toEqual([['approval', 'failed'], ['cleanup', 'succeeded']]);
  });

  test('bad run timeouts are refused with a one-line error naming the option', async () => {
    expect(() => workflow('bad-timeout', { timeout: 'soon' }, (w) => w.run(async () => 1))).toThrow(/timeout/);
    expect(() => workflow('bad-timeout', { timeout: 0 }, (w) => w.run(async () => 1))).toThrow(/workflow 'bad-timeout' option timeout: must be a positive duration/);
    const wf = workflow('fine', (w) => {
      w.trigger(manual());
      w.run(async () => 1);
    });
    const { engine } = await boot([wf]);
    await expect(engine.trigger('fine', null, { timeout: -5 })).rejects.toThrow(/^trigger option timeout: must be a positive duration/);
    expect(await engine.runs.list()).toEqual([]);
  });

  test('rerun of a succeeded run starts a new run with its input, linked both ways; a live run is refused', async () => {
    let calls = 0;
    const wf = workflow('rerunnable', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const n = await step.do('count', () => ++calls);
        if ((input as { wait?: boolean }).wait) await step.waitForEvent('go');
        return { input, n };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('rerunnable', { x: 1 });
    expect((await engine.result(runId, { timeout: '20s' })).output).toEqual({ input: { x: 1 }, n: 1 });
    const again = await engine.runs.rerun(runId, { runId: `${runId}-again` });
    expect(again).toEqual({ runId: `${runId}-again`, created: true });
    const view = await engine.result(again.runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ input: { x: 1 }, n: 2 });
    expect((await engine.runs.get(again.runId)).rerunOf).toBe(runId);
    const old = await engine.runs.get(runId);
    expect(old.reruns).toEqual([again.runId]);
    expect(old.status).toBe('succeeded');
    expect((await engine.runs.explain(again.runId)).details).toContain(`rerun of run ${runId}`);
    const live = await engine.trigger('rerunnable', { wait: true });
    await until('the live run to wait', async () => (await engine.runs.get(live.runId)).status === 'waiting');
    await expect(engine.runs.rerun(live.runId)).rejects.toThrow(/is waiting; only a finished run \(succeeded, failed or cancelled\) can be rerun/);
    await expect(engine.runs.rerun('no-such-run')).rejects.toThrow(/no-such-run/);
    await engine.runs.cancel(live.runId);
  });

  test('resume of a cancelled run continues from where it stopped: recorded results reused, the cancelled step runs again', async () => {
    const calls = { before: 0, undo: 0, after: 0 };
    const wf = workflow('continue-me', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const a = await step.do('before', () => ++calls.before);
        let go: unknown;
        try {
          go = await step.waitForEvent('go');
        } catch (err) {
          await step.do('undo', () => ++calls.undo);
          throw err;
        }
        const b = await step.do('after', () => ++calls.after);
        return { a, go, b };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('continue-me', null);
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.runs.cancel(runId);
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('cancelled');
    expect((await engine.runs.explain(runId)).next).toContain(`tranquil runs resume ${runId}`);
    const resumed = await engine.runs.resume(runId);
    expect(resumed).toMatchObject({ resumed: 'cancelled', from: { name: 'go' } });
    expect(resumed.discarded.map((d) => d.name)).toEqual(['go', 'undo']);
    await until('the resumed run to wait again', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.signal(runId, 'go', 'now');
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 1, go: 'now', b: 1 });
    expect(calls).toEqual({ before: 1, undo: 1, after: 1 });
    expect((await engine.runs.get(runId)).steps.map((s) => [s.name, s.status])).toEqual([['before', 'succeeded'], ['go', 'succeeded'], ['after', 'succeeded']]);
    await expect(engine.runs.resume(runId)).rejects.toThrow(/is succeeded; only a paused or a cancelled run can be resumed/);
  });

  test('pause during a running body: the body finishes and is recorded, the run is paused at the next step; resume goes on', async () => {
    const calls = { slow: 0, after: 0 };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const wf = workflow('pausable', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const s = await step.do('slow', async () => {
          calls.slow++;
          await held;
          return 'slow done';
        });
        const a = await step.do('after', () => ++calls.after);
        return { s, a };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('pausable', null);
    await until('the body to start', () => calls.slow === 1);
    await engine.runs.pause(runId, { by: 'ops' });
    release();
    await until('the run to be paused', async () => (await engine.runs.get(runId)).status === 'paused');
    const paused = await engine.runs.get(runId);
    expect(paused.steps.map((s) => [s.name, s.status, s.result])).toEqual([['slow', 'succeeded', 'slow done']]);
    expect(paused.paused?.by).toBe('ops');
    expect(calls).toEqual({ slow: 1, after: 0 });
    expect((await engine.runs.list({ status: 'paused' })).map((r) => r.runId)).toEqual([runId]);
    const why = await engine.runs.explain(runId);
    expect(why.summary).toContain(`is paused by ops at ${paused.paused!.at}; `);
    expect(why.summary).toContain(`resume with \`tranquil runs resume ${runId}\``);
    expect(await engine.runs.resume(runId)).toEqual({ resumed: 'paused', discarded: [] });
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ s: 'slow done', a: 1 });
    expect(calls).toEqual({ slow: 1, after: 1 });
    await expect(engine.runs.pause(runId)).rejects.toThrow(/already finished \(succeeded\); nothing to pause/);
  });

  test('timers due while paused fire on resume; a signal sent while paused waits; pause holds across a restart', async () => {
    const after: string[] = [];
    // Long enough for the pause to come before the nap is due on a loaded machine (each
    // runs.get on Restate is a SQL query of its admin API).
    const NAP_MS = 2000;
    const wf = workflow('paused-timers', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        if (input === 'sleep') await step.sleep('nap', NAP_MS);
        else await step.waitForEvent('go');
        await step.do('after', () => void after.push(String(input)));
        return 'done';
      });
    });
    const { engine, dir } = await boot([wf]);
    const sleeper = await engine.trigger('paused-timers', 'sleep');
    const waiter = await engine.trigger('paused-timers', 'wait');
    await until('the sleeper to sleep', async () => (await engine.runs.get(sleeper.runId)).status === 'sleeping');
    // The nap's due time as recorded (the run may have started well after the trigger on a
    // loaded machine: a wait counted from the trigger ended before the nap was due).
    const dueAt = Date.parse((await engine.runs.get(sleeper.runId)).wakeAt ?? '');
    expect(Number.isFinite(dueAt)).toBe(true);
    await engine.runs.pause(sleeper.runId);
    await until('the waiter to wait', async () => (await engine.runs.get(waiter.runId)).status === 'waiting');
    await engine.runs.pause(waiter.runId);
    await engine.signal(waiter.runId, 'go', 1);
    await new Promise((r) => setTimeout(r, Math.max(0, dueAt + 400 - Date.now()))); // the nap came due while paused
    await until('the sleeper, due, to show paused', async () => (await engine.runs.get(sleeper.runId)).status === 'paused');
    expect((await engine.runs.get(waiter.runId)).status).toBe('paused');
    expect(after).toEqual([]);
    const again = await restart(engine, [wf], dir);
    await new Promise((r) => setTimeout(r, 300));
    expect((await again.runs.get(sleeper.runId)).status).toBe('paused');
    expect((await again.runs.get(waiter.runId)).status).toBe('paused');
    expect(after).toEqual([]);
    await again.runs.resume(sleeper.runId);
    await again.runs.resume(waiter.runId);
    expect((await again.result(sleeper.runId, { timeout: '20s' })).status).toBe('succeeded');
    expect((await again.result(waiter.runId, { timeout: '20s' })).status).toBe('succeeded');
    expect(after.sort()).toEqual(['sleep', 'wait']);
  });

  test('a paused run can be cancelled (its cleanup runs); pause and resume refuse what they cannot do', async () => {
    const wf = workflow('pause-cancel', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.sleep('nap', '1d');
        } finally {
          await step.do('cleanup', () => 'cleaned');
        }
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('pause-cancel', null);
    await until('the run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    await expect(engine.runs.resume(runId)).rejects.toThrow(/is sleeping; only a paused or a cancelled run can be resumed/);
    await engine.runs.pause(runId);
    await engine.runs.pause(runId); // again: no change
    await engine.runs.cancel(runId);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('cancelled');
    expect((await engine.runs.get(runId)).steps.map((s) => [s.name, s.status])).toEqual([['nap', 'failed'], ['cleanup', 'succeeded']]);
    await expect(engine.runs.pause(runId, { by: '' })).rejects.toThrow(/by/);
  });
}
