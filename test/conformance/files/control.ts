// Run control cases THROUGH THE RUNNER (the in-process cases of the same names are in
// test/conformance/control.ts): the run deadline. A file's `timeout` is described by its
// no-permission child and stored with each run at the trigger; the run's child is handed the
// deadline in `hello`, and its RunSession meets it as in-process (docs/control.md).
import { expect } from 'vitest';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

export function controlFileScenarios({ test, boot }: FileKit): void {
  test('run deadline: the run fails with TimeoutError after its cleanup, as after a cancel; why names the deadline', async () => {
    const rig = await boot(`
export default workflow('deadline', { timeout: '1h' }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await step.do('reserve', () => 'held');
      await step.sleep('long', '1d');
      return 'finished';
    } catch (err) {
      await step.do('release', () => 'released:' + (err instanceof TimeoutError));
      throw err;
    }
  });
});`);
    const { engine } = rig;
    // The trigger's override wins over the workflow's hour.
    const before = Date.now();
    const { runId } = await engine.trigger('deadline', null, { timeout: 3000 });
    const after = Date.now();
    const ended = await engine.result(runId, { timeout: '60s' });
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatchObject({ name: 'TimeoutError' });
    expect(ended.error!.message).toMatch(/^run deadline /);
    const view = await engine.runs.get(runId);
    expect(Date.parse(view.deadline!)).toBeGreaterThanOrEqual(before + 3000);
    expect(Date.parse(view.deadline!)).toBeLessThanOrEqual(after + 3000);
    const steps = view.steps.map((s) => [s.name, s.status, s.error?.name ?? s.result]);
    const hit = view.steps.find((s) => s.error?.name === 'TimeoutError')!;
    expect(['reserve', 'long']).toContain(hit.name);
    expect(steps.slice(-2)).toEqual([[hit.name, 'failed', 'TimeoutError'], ['release', 'succeeded', 'released:true']]);
    const why = await engine.runs.explain(runId);
    expect(why.summary).toContain(`deadline ${view.deadline}; timed out at ${view.updatedAt}`);
    expect(why.summary).toContain(`step '${hit.name}'`);
    // Without an override: the workflow's timeout (described from the file), stored with the run.
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
    const rig = await boot(`
export default workflow('deadline-restart', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await step.waitForEvent('approval');
      return 'approved';
    } finally {
      await step.do('cleanup', () => void hit('cleanup'));
    }
  });
});`);
    const { runId } = await rig.engine.trigger('deadline-restart', null, { timeout: 5000 });
    await until('the run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    const deadline = Date.parse((await rig.engine.runs.get(runId)).deadline!);
    await rig.engine.stop();
    // The deadline passes while no engine runs.
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()) + 200));
    const again = await rig.restart();
    const view = await again.result(runId, { timeout: '60s' });
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({ name: 'TimeoutError' });
    expect((await again.runs.get(runId)).steps.map((s) => [s.name, s.status])).toEqual([['approval', 'failed'], ['cleanup', 'succeeded']]);
    expect(rig.hits('cleanup')).toBe(1);
  });

  test('bad run timeouts are refused with a one-line error naming the option', async () => {
    // In a file, the workflow's own timeout is checked where its code runs: describing it fails.
    await expect(boot(`
export default workflow('bad-timeout', { timeout: 0 }, (w) => {
  w.trigger(manual());
  w.run(async () => 1);
});`)).rejects.toThrow(/flow0\.ts: could not be described .*workflow 'bad-timeout' option timeout: must be a positive duration/);
    const rig = await boot(`
export default workflow('fine', (w) => {
  w.trigger(manual());
  w.run(async () => 1);
});`);
    await expect(rig.engine.trigger('fine', null, { timeout: -5 })).rejects.toThrow(/^trigger option timeout: must be a positive duration/);
    expect(await rig.engine.runs.list()).toEqual([]);
  });
}
