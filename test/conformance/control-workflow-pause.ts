// Conformance scenarios for the pause of a whole workflow (issue 41, docs/control.md "Pause a
// workflow"): new runs (an event, a schedule slot, a trigger) are created and held before
// their code runs; resume runs them in creation order or skips them; a run executing when
// the workflow is paused finishes. Called from runConformance(): the same on every backend.
import { expect } from 'vitest';
import { event, manual, schedule, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

const tagOf = (input: unknown): string => {
  const i = input as { slot?: string; n?: number } | null;
  return i?.slot !== undefined ? `slot ${i.slot}` : `event ${i?.n}`;
};

/** The workflow's held runs, oldest first. */
async function heldRuns(engine: Engine, wf: string) {
  const page = await engine.runs.list({ workflow: wf, status: 'paused' });
  return [...page].filter((r) => r.paused?.held).reverse();
}

export function workflowPauseScenarios({ test, boot, until }: ScenarioKit): void {
  test('workflow pause holds an event and a schedule slot (one run per event id); resume runs them in creation order', async () => {
    const ran: string[] = [];
    const wf = workflow('wfp-hold', (w) => {
      w.trigger(event('wfp.go'));
      w.trigger(schedule('* * * * * *'));
      w.run(async ({ input, step }) => step.do('work', () => {
        ran.push(tagOf(input));
        return tagOf(input);
      }));
    });
    const { engine } = await boot([wf]);
    await expect(engine.workflows.pause('no-such-workflow')).rejects.toThrow(/no-such-workflow/);
    await expect(engine.workflows.resume('wfp-hold')).rejects.toThrow("workflow 'wfp-hold' is not paused");
    await expect(engine.workflows.resume('wfp-hold', { held: 'later' as never })).rejects.toThrow(/held/);
    const paused = await engine.workflows.pause('wfp-hold', { by: 'ops' });
    expect(paused).toMatchObject({ workflow: 'wfp-hold', by: 'ops' });
    // Pausing again changes nothing: the first asker stays.
    expect(await engine.workflows.pause('wfp-hold', { by: 'someone else' })).toEqual(paused);
    expect((await engine.workflows.list()).find((w) => w.name === 'wfp-hold')).toEqual({ name: 'wfp-hold', paused: { by: 'ops', at: paused.at } });

    const first = await engine.emit('wfp.go', { n: 1 }, { id: 'wfp-e1' });
    expect(first.runIds).toHaveLength(1);
    // The event id is recorded as always: a second emit starts nothing.
    expect(await engine.emit('wfp.go', { n: 1 }, { id: 'wfp-e1' })).toEqual({ runIds: first.runIds, duplicate: true });
    const eventRun = first.runIds[0]!;
    await until('the event run and a slot run to be held', async () => {
      const held = await heldRuns(engine, 'wfp-hold');
      return held.some((r) => r.runId === eventRun) && held.some((r) => (r.input as { slot?: string }).slot !== undefined);
    }, 20_000);
    const view = await engine.runs.get(eventRun);
    expect(view.status).toBe('paused');
    expect(view.paused).toEqual({ by: 'workflow pause (by ops)', at: paused.at, held: true });
    expect(view.steps).toEqual([]);
    expect(ran).not.toContain('event 1');
    const why = await engine.runs.explain(eventRun);
    expect(why.summary).toContain("workflow 'wfp-hold' is paused by ops");
    expect(why.next).toContain('tranquil workflows resume wfp-hold');

    const held = await heldRuns(engine, 'wfp-hold');
    for (const r of held) expect(ran).not.toContain(tagOf(r.input));
    const resumed = await engine.workflows.resume('wfp-hold');
    expect(resumed.held).toBe('run');
    // Every run held when it was asked, in creation order (a slot may have come due since).
    expect(resumed.runs.slice(0, held.length)).toEqual(held.map((r) => r.runId));
    expect((await engine.workflows.list()).find((w) => w.name === 'wfp-hold')).toEqual({ name: 'wfp-hold' });
    const tags: string[] = [];
    for (const id of resumed.runs) {
      const end = await engine.result(id, { timeout: '20s' });
      expect(end.status).toBe('succeeded');
      tags.push(end.output as string);
    }
    // Each body ran once. They were started in creation order (resumed.runs, above), but runs
    // resumed together execute side by side, so the order their bodies reach a step is not
    // promised (it flipped on SQLite about one run in three: a held event run and a slot run).
    for (const t of tags) expect(ran.filter((x) => x === t)).toHaveLength(1);
    expect([...ran.filter((x) => tags.includes(x))].sort()).toEqual([...tags].sort());
  }, 60_000);

  test('workflow resume with held skip ends the held runs without running their code; a held run cancelled ends at once', async () => {
    let bodies = 0;
    const wf = workflow('wfp-skip', (w) => {
      w.trigger(event('wfp.skip'));
      w.trigger(manual());
      w.run(async ({ step }) => step.do('work', () => ++bodies));
    });
    const { engine } = await boot([wf]);
    await engine.workflows.pause('wfp-skip', { by: 'ops' });
    const a = (await engine.emit('wfp.skip', { n: 1 }, { id: 'wfp-s1' })).runIds[0]!;
    const b = (await engine.trigger('wfp-skip', { n: 2 })).runId;
    const c = (await engine.trigger('wfp-skip', { n: 3 })).runId;
    await until('three held runs', async () => (await heldRuns(engine, 'wfp-skip')).length === 3);
    await engine.runs.cancel(c, { by: 'ops' });
    const cancelled = await engine.result(c, { timeout: '20s' });
    expect(cancelled.status).toBe('cancelled');
    const r = await engine.workflows.resume('wfp-skip', { held: 'skip' });
    expect(r).toEqual({ workflow: 'wfp-skip', held: 'skip', runs: [a, b] });
    for (const id of [a, b]) {
      const end = await engine.result(id, { timeout: '20s' });
      expect(end.status).toBe('succeeded');
      expect(end.output).toEqual({ outcome: 'skipped', reason: "held while workflow 'wfp-skip' was paused; skipped by its resume (held: 'skip'), its code never ran" });
    }
    expect(bodies).toBe(0);
    // Unpaused: a new run runs.
    const d = (await engine.trigger('wfp-skip', { n: 4 })).runId;
    expect((await engine.result(d, { timeout: '20s' })).output).toBe(1);
  }, 60_000);

  test('a run executing when its workflow is paused finishes normally; one started after is held until the resume', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: number[] = [];
    const wf = workflow('wfp-live', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('a', async () => {
          started.push((input as { n: number }).n);
          if ((input as { n: number }).n === 1) await gate;
        });
        return step.do('b', () => 'done');
      });
    });
    const { engine } = await boot([wf]);
    const one = (await engine.trigger('wfp-live', { n: 1 })).runId;
    await until('the first run to start', () => started.includes(1));
    await engine.workflows.pause('wfp-live', { by: 'ops' });
    const two = (await engine.trigger('wfp-live', { n: 2 })).runId;
    release();
    const end = await engine.result(one, { timeout: '20s' });
    expect(end.status).toBe('succeeded');
    expect(end.steps.map((s) => [s.name, s.status])).toEqual([['a', 'succeeded'], ['b', 'succeeded']]);
    await until('the second run to be held', async () => (await engine.runs.get(two)).status === 'paused');
    expect(started).toEqual([1]);
    await engine.workflows.resume('wfp-live');
    expect((await engine.result(two, { timeout: '20s' })).status).toBe('succeeded');
    expect(started).toEqual([1, 2]);
  }, 60_000);
}
