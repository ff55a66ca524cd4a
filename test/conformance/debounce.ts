// Conformance scenarios for run-level debounce (issue 39, docs/flow-control.md, Debounce): a
// burst of triggers with one key becomes one run with the last input. Assertions come from
// what the bodies saw (their input, their own start time) and what trigger() returned.
import { expect } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen {
  user: string;
  n: number;
  at: number;
}

/** A debounced workflow whose body records what it ran with. */
function debounced(name: string, seen: Seen[], debounce: { period: string | number; maxWait?: string | number }) {
  return workflow(name, { debounce: { ...debounce, key: (input: { user: string }) => input.user } }, (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => {
      const at = await step.do('begin', () => Date.now());
      seen.push({ user: input.user, n: input.n, at });
      return { user: input.user, n: input.n };
    });
  });
}

export function debounceScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('debounce collapses a burst of 50 triggers into one run with the last input', async () => {
    const seen: Seen[] = [];
    const wf = debounced('db-burst', seen, { period: '1500ms' });
    const { engine } = await boot([wf]);
    const starts = [];
    let lastAt = 0;
    for (let n = 0; n < 50; n++) {
      starts.push(await engine.trigger('db-burst', { user: 'u1', n }));
      lastAt = Date.now();
    }
    // One run id for the whole burst, opened by its first trigger.
    expect(new Set(starts.map((s) => s.runId)).size).toBe(1);
    expect(starts.map((s) => s.created)).toEqual([true, ...Array(49).fill(false)]);
    expect(starts.every((s) => typeof s.debouncedUntil === 'string')).toBe(true);
    const view = await engine.result(starts[0]!.runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ user: 'u1', n: 49 });
    expect(seen).toEqual([expect.objectContaining({ user: 'u1', n: 49 })]);
    // Started a period after the last trigger, not before (a few ms for clock granularity).
    expect(seen[0]!.at).toBeGreaterThanOrEqual(lastAt + 1500 - 20);
    // Nothing else starts later: the burst is spent.
    await sleep(300);
    expect(seen).toHaveLength(1);
  }, 60_000);

  test('debounce: maxWait bounds the delay of a burst that never goes quiet; each run has its burst\'s last input', async () => {
    const seen: Seen[] = [];
    // maxWait equal to the period: a burst is due at most 1 s after its first trigger,
    // while without maxWait nothing could start before the stream ends.
    const wf = debounced('db-maxwait', seen, { period: '1s', maxWait: '1s' });
    const { engine } = await boot([wf]);
    const lastOf = new Map<string, number>();
    const firstAt = new Map<string, number>();
    const streamStart = Date.now();
    let n = 0;
    while (Date.now() < streamStart + 3000) {
      const at = Date.now();
      const r = await engine.trigger('db-maxwait', { user: 'u1', n });
      if (!firstAt.has(r.runId)) firstAt.set(r.runId, at);
      lastOf.set(r.runId, n++);
      await sleep(40);
    }
    const lastTrigger = Date.now();
    const ids = [...lastOf.keys()];
    expect(ids.length).toBeGreaterThanOrEqual(2);
    // Every burst ran with its own last input, no earlier than maxWait after its first trigger.
    for (const id of ids) {
      const view = await engine.result(id, { timeout: '30s' });
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual({ user: 'u1', n: lastOf.get(id) });
      expect(seen.find((s) => s.n === lastOf.get(id))!.at).toBeGreaterThanOrEqual(firstAt.get(id)! + 1000 - 20);
    }
    expect(seen).toHaveLength(ids.length);
    // The first one started while triggers still came: maxWait, not quiet, started it.
    expect(seen.find((s) => s.n === lastOf.get(ids[0]!))!.at).toBeLessThan(lastTrigger);
  }, 60_000);

  test('debounce: separate keys debounce separately', async () => {
    const seen: Seen[] = [];
    const wf = debounced('db-keys', seen, { period: '800ms' });
    const { engine } = await boot([wf]);
    const ids = new Map<string, Set<string>>([['a', new Set()], ['b', new Set()]]);
    for (let n = 0; n < 20; n++) {
      const user = n % 2 === 0 ? 'a' : 'b';
      ids.get(user)!.add((await engine.trigger('db-keys', { user, n })).runId);
    }
    expect(ids.get('a')!.size).toBe(1);
    expect(ids.get('b')!.size).toBe(1);
    const [a] = ids.get('a')!;
    const [b] = ids.get('b')!;
    expect(a).not.toBe(b);
    expect((await engine.result(a!, { timeout: '30s' })).output).toEqual({ user: 'a', n: 18 });
    expect((await engine.result(b!, { timeout: '30s' })).output).toEqual({ user: 'b', n: 19 });
    expect(seen.map((s) => s.n).sort((x, y) => x - y)).toEqual([18, 19]);
  }, 60_000);

  test('debounce: a pending burst survives an engine restart and runs once with its last input', async () => {
    const seen: Seen[] = [];
    // Longer than a restart takes (Restate's server restarts with the engine).
    const wf = debounced('db-restart', seen, { period: '5s' });
    const { engine, dir } = await boot([wf]);
    let runId = '';
    for (let n = 0; n < 3; n++) runId = (await engine.trigger('db-restart', { user: 'u1', n })).runId;
    const second = await restart(engine, [wf], dir);
    expect(seen).toHaveLength(0);
    // The burst goes on after the restart: a trigger joins it.
    expect(await second.trigger('db-restart', { user: 'u1', n: 3 })).toMatchObject({ runId, created: false });
    const view = await second.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ user: 'u1', n: 3 });
    await until('no second run', async () => (await second.runs.list({ workflow: 'db-restart' })).length === 1, 2000);
    expect(seen).toEqual([expect.objectContaining({ n: 3 })]);
  }, 90_000);

  test('debounce: a key function that throws or returns no string is refused at trigger, nothing stored', async () => {
    const wf = workflow('db-badkey', { debounce: { period: '1s', key: (input: { user?: unknown }) => input.user as string } }, (w) => {
      w.trigger(manual());
      w.run(async () => null);
    });
    const { engine } = await boot([wf]);
    await expect(engine.trigger('db-badkey', { user: 7 })).rejects.toThrow("workflow 'db-badkey' debounce.key: the key function returned number, not a string");
    await expect(engine.trigger('db-badkey', { user: 'u1' }, { runId: 'mine' })).rejects.toThrow(/trigger option runId: workflow 'db-badkey' is debounced/);
    expect((await engine.runs.list({ workflow: 'db-badkey' })).length).toBe(0);
  });
}
