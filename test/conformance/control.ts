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
        await step.do('reserve', () => 'held');
        try {
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
    const { runId } = await engine.trigger('deadline', null, { timeout: 800 });
    const after = Date.now();
    const ended = await engine.result(runId, { timeout: '20s' });
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatchObject({ name: 'TimeoutError' });
    expect(ended.error!.message).toMatch(/^run deadline /);
    const view = await engine.runs.get(runId);
    // Counted from the trigger (a backend may date createdAt from its own start of the run).
    expect(Date.parse(view.deadline!)).toBeGreaterThanOrEqual(before + 800);
    expect(Date.parse(view.deadline!)).toBeLessThanOrEqual(after + 800);
    expect(view.steps.map((s) => [s.name, s.status, s.error?.name ?? s.result])).toEqual([
      ['reserve', 'succeeded', 'held'],
      ['long', 'failed', 'TimeoutError'],
      ['release', 'succeeded', 'released:true'],
    ]);
    const why = await engine.runs.explain(runId);
    expect(why.summary).toContain(`deadline ${view.deadline}; timed out at ${view.updatedAt}`);
    expect(why.summary).toContain(`step 'long'`);
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
    const { runId } = await engine.trigger('deadline-restart', null, { timeout: 1500 });
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.stop();
    await new Promise((r) => setTimeout(r, 1600));
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
}
