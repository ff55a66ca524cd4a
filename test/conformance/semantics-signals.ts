// Conformance scenarios for issue 19 defects 2 and 9, called from runConformance():
// - signals: many signals to one run, sent at once, each land in their own slot in one
//   stable order and are all consumed (on Restate a per-(run, name) queue hands out slots;
//   it replaced probing slots 1..k, whose cost grew with every signal);
// - listing: runs.list pages with a cursor and says when there is more (it used to stop
//   silently at 100).
import { expect } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { RunStateError, ValidationError, type RunView } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

export function signalScenarios({ test, boot, until }: ScenarioKit): void {
  test('100 signals sent at once to a waiting run: each consumed once, in one order that replay keeps', async () => {
    const N = 100;
    const wf = workflow('collector', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const got: number[] = [];
        for (let i = 0; i < N; i++) got.push(await step.waitForEvent<number>('item', { timeout: '60s' }));
        await step.sleep('nap', 50); // forces a replay of every wait above
        return got;
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('collector', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await Promise.all(Array.from({ length: N }, (_, i) => engine.signal(runId, 'item', i)));
    const view = await engine.result(runId, { timeout: '90s' });
    expect(view.status).toBe('succeeded');
    const got = view.output as number[];
    // None lost, none twice.
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i));
    // The order the run saw is the order its journal recorded (and replay returned).
    const waits = view.steps.filter((s) => s.kind === 'wait');
    expect(waits.map((s) => s.result)).toEqual(got);
  }, 120_000);

  test('signal names with any characters reach their wait; a finished run refuses signals', async () => {
    const names = ['a/b', 'what?now', 'x%2Fy', 'ünï cödé', 'sp ace!1'];
    const wf = workflow('odd-names', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const out: Record<string, unknown> = {};
        for (const n of names) out[n] = await step.waitForEvent(n, { timeout: '30s' });
        return out;
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('odd-names', null);
    for (const n of [...names].reverse()) await engine.signal(runId, n, `for ${n}`);
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(Object.fromEntries(names.map((n) => [n, `for ${n}`])));
    const refused = await engine.signal(runId, 'a/b', 'too late').then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(RunStateError);
    expect((refused as Error).message).toBe(`run ${runId} already finished (succeeded); signal 'a/b' not delivered`);
  }, 60_000);

  test('runs.list pages with a cursor: every run once, newest first, `next` only while more match', async () => {
    const wf = workflow('pageable', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('echo', () => input));
    });
    const other = workflow('unlisted', (w) => {
      w.trigger(manual());
      w.run(async () => 'x');
    });
    const { engine } = await boot([wf, other]);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await engine.trigger('pageable', i)).runId);
    await engine.result((await engine.trigger('unlisted', null)).runId, { timeout: '20s' });
    for (const id of ids) await engine.result(id, { timeout: '20s' });

    const all = await engine.runs.list({ workflow: 'pageable' });
    expect(all.map((r) => r.runId).sort()).toEqual([...ids].sort());
    expect(all.next).toBeUndefined();
    // Newest first.
    const created = all.map((r) => Date.parse(r.createdAt));
    expect(created).toEqual([...created].sort((a, b) => b - a));

    const pages: RunView[][] = [];
    let cursor: string | undefined;
    do {
      const page = await engine.runs.list({ workflow: 'pageable', limit: 3, ...(cursor ? { cursor } : {}) });
      pages.push(page);
      cursor = page.next;
      // The page is still the plain array it always was.
      expect(Array.isArray(page)).toBe(true);
      expect(JSON.parse(JSON.stringify(page))).toHaveLength(page.length);
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((r) => r.runId)).toEqual(all.map((r) => r.runId));

    // A status filter pages the same way; a limit that ends exactly at the last run has no next.
    const ok1 = await engine.runs.list({ status: 'succeeded', limit: 5 });
    expect(ok1.next).toBeDefined();
    const ok2 = await engine.runs.list({ status: 'succeeded', limit: 5, cursor: ok1.next });
    expect(ok2.next).toBeUndefined();
    expect([...ok1, ...ok2].map((r) => r.runId).sort()).toEqual([...(await engine.runs.list({ status: 'succeeded' }))].map((r) => r.runId).sort());
    expect(ok1.length + ok2.length).toBe(8);
    expect((await engine.runs.list({ limit: 8 })).next).toBeUndefined();

    // A cursor this backend did not make is refused in one line.
    await expect(engine.runs.list({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(ValidationError);
    await expect(engine.runs.list({ cursor: 'not-a-cursor' })).rejects.toThrow(/^runs\.list cursor: /);
  }, 60_000);
}
