// The pause of a whole workflow THROUGH THE RUNNER (the in-process cases of the same names are
// in test/conformance/control-workflow-pause.ts): a file's run is held before any of its code
// runs (in the run's insert on SQLite, in its run handler on Restate), so no child is spawned
// for it until the resume; a run executing when the workflow is paused goes on.
import { expect } from 'vitest';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

export function workflowPauseFileScenarios({ test, boot }: FileKit): void {
  test('workflow resume with held skip ends the held runs without running their code; a held run cancelled ends at once', async () => {
    const { engine, hits } = await boot(`
export default workflow('wfp-skip', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(event('wfp.skip'));
  w.trigger(manual());
  w.run(async ({ step }) => step.do('work', () => (hit('work'), 1)));
});`);
    await engine.workflows.pause('wfp-skip', { by: 'ops' });
    const a = (await engine.emit('wfp.skip', { n: 1 }, { id: 'wfp-s1' })).runIds[0]!;
    const b = (await engine.trigger('wfp-skip', { n: 2 })).runId;
    const c = (await engine.trigger('wfp-skip', { n: 3 })).runId;
    const held = async () => [...(await engine.runs.list({ workflow: 'wfp-skip', status: 'paused' }))].filter((r) => r.paused?.held);
    await until('three held runs', async () => (await held()).length === 3);
    await engine.runs.cancel(c, { by: 'ops' });
    expect((await engine.result(c, { timeout: '60s' })).status).toBe('cancelled');
    const r = await engine.workflows.resume('wfp-skip', { held: 'skip' });
    expect(r).toEqual({ workflow: 'wfp-skip', held: 'skip', runs: [a, b] });
    for (const id of [a, b]) {
      const end = await engine.result(id, { timeout: '60s' });
      expect(end.status).toBe('succeeded');
      expect(end.output).toEqual({ outcome: 'skipped', reason: "held while workflow 'wfp-skip' was paused; skipped by its resume (held: 'skip'), its code never ran" });
    }
    expect(hits('work')).toBe(0);
    // Unpaused: a new run runs.
    const d = (await engine.trigger('wfp-skip', { n: 4 })).runId;
    expect((await engine.result(d, { timeout: '60s' })).output).toBe(1);
    expect(hits('work')).toBe(1);
  });

  test('a run executing when its workflow is paused finishes normally; one started after is held until the resume', async () => {
    const { engine, text, open } = await boot(`
export default workflow('wfp-live', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const n = (input as { n: number }).n;
    await step.do('a', async () => {
      hit('started', String(n));
      if (n === 1) await gate('one');
    });
    return step.do('b', () => 'done');
  });
});`);
    const one = (await engine.trigger('wfp-live', { n: 1 })).runId;
    await until('the first run to start', () => text('started').includes('1'));
    await engine.workflows.pause('wfp-live', { by: 'ops' });
    const two = (await engine.trigger('wfp-live', { n: 2 })).runId;
    open('one');
    const end = await engine.result(one, { timeout: '60s' });
    expect(end.status).toBe('succeeded');
    expect(end.steps.map((s) => [s.name, s.status])).toEqual([['a', 'succeeded'], ['b', 'succeeded']]);
    await until('the second run to be held', async () => (await engine.runs.get(two)).status === 'paused');
    expect(text('started')).toBe('1');
    await engine.workflows.resume('wfp-live');
    expect((await engine.result(two, { timeout: '60s' })).status).toBe('succeeded');
    expect(text('started')).toBe('12');
  });
}
