// Conformance scenario for runs.list's time filter (issue 15: the panel filters runs by time):
// `since` / `until` bound the runs' createdAt, inclusive, on every backend, and page with the
// cursor like any other filter. A bad instant is a one-line ValidationError.
import { expect } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function listTimeScenarios({ test, boot }: Pick<ScenarioKit, 'test' | 'boot'>): void {
  test('runs.list since/until: only runs created in the window, inclusive, paged', async () => {
    const wf = workflow('timed', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('a', () => 1));
    });
    const { engine } = await boot([wf]);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await engine.trigger('timed', i)).runId);
      await pause(30);
    }
    for (const id of ids) await engine.result(id, { timeout: '20s' });
    const at = await Promise.all(ids.map(async (id) => (await engine.runs.get(id)).createdAt));
    const list = async (f: { since?: string; until?: string; limit?: number; cursor?: string }) => (await engine.runs.list({ workflow: 'timed', ...f })).map((r) => r.runId);
    expect(await list({ since: at[1] })).toEqual([ids[3], ids[2], ids[1]]);
    expect(await list({ until: at[1] })).toEqual([ids[1], ids[0]]);
    expect(await list({ since: at[1], until: at[2] })).toEqual([ids[2], ids[1]]);
    const first = await engine.runs.list({ workflow: 'timed', since: at[0], limit: 2 });
    expect(first.map((r) => r.runId)).toEqual([ids[3], ids[2]]);
    expect(await list({ since: at[0], limit: 2, cursor: first.next })).toEqual([ids[1], ids[0]]);
    await expect(engine.runs.list({ since: 'yesterday' })).rejects.toThrow(/since.*ISO 8601 instant/);
  });
}
