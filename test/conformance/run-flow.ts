// Conformance scenarios for run-level singleton, rate-limit drop and throttle (issue 39,
// docs/flow-control.md): a workflow's `runs: { singleton }`, `runs: { rateLimit }`, and a
// rate-limited queue as `runs: { queue }` (throttle). A skipped run ends at once with output
// { outcome: 'skipped', reason }, none of its code run.
import { expect } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function runFlowScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('run flow: singleton skip: a run asked while one of its key is unfinished (across a restart) is skipped with the reason; other keys and later runs start; bad config refused', async () => {
    const began: string[] = [];
    const wf = workflow('rf-single', { runs: { singleton: { key: (i: { user: string }) => i.user, mode: 'skip' } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('begin', () => void began.push(input.n));
        if (input.hold) await step.waitForEvent('go');
        return input.n;
      });
    });
    const { engine: first, dir } = await boot([wf]);
    const holder = (await first.trigger('rf-single', { n: 'a', user: 'u1', hold: true })).runId;
    await until('the holder to start', () => began.includes('a'));
    // The holder keeps its key across a restart.
    const engine = await restart(first, [wf], dir);
    const skippedRun = (await engine.trigger('rf-single', { n: 'b', user: 'u1' })).runId;
    const done = await engine.result(skippedRun, { timeout: '20s' });
    expect(done).toMatchObject({ status: 'succeeded', output: { outcome: 'skipped', reason: `runs.singleton (mode skip): run ${holder} with key 'u1' is unfinished` } });
    expect(done.steps).toHaveLength(0);
    expect((await engine.runs.explain(skippedRun)).summary).toContain(`was skipped: runs.singleton (mode skip): run ${holder} with key 'u1' is unfinished`);
    // Another key is not held back.
    expect(await engine.result((await engine.trigger('rf-single', { n: 'c', user: 'u2' })).runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: 'c' });
    await engine.signal(holder, 'go', null);
    expect((await engine.result(holder, { timeout: '20s' })).status).toBe('succeeded');
    // The holder ended: the key is free again.
    expect(await engine.result((await engine.trigger('rf-single', { n: 'd', user: 'u1' })).runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: 'd' });
    expect(began).toEqual(['a', 'c', 'd']);
    // A key function that returns no string: refused at trigger, naming it, nothing stored.
    await expect(engine.trigger('rf-single', { n: 'e', user: 7 })).rejects.toThrow(/^workflow 'rf-single' runs\.singleton\.key: the key function returned number, not a string$/);
    expect(await engine.runs.list({ workflow: 'rf-single' })).toHaveLength(4);
    expect(() => workflow('rf-bad', { runs: { singleton: { mode: 'drop' as 'skip' } } }, (w) => w.run(async () => 1))).toThrow(/^workflow 'rf-bad' options\.runs\.singleton\.mode: /);
  });

  test('run flow: singleton cancel: a new run cancels the unfinished one of its key (its cleanup runs), then starts; a burst leaves one', async () => {
    const events: string[] = [];
    const once = (e: string) => void (events.includes(e) || events.push(e));
    const wf = workflow('rf-latest', { runs: { singleton: { key: (i: { user: string }) => i.user, mode: 'cancel' } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('begin', () => once(`${input.n} start`));
        try {
          if (input.hold) await step.waitForEvent('go');
        } finally {
          once(`${input.n} end`);
        }
        return input.n;
      });
    });
    const { engine } = await boot([wf]);
    const first = (await engine.trigger('rf-latest', { n: 'a', user: 'u1', hold: true })).runId;
    await until('the first run to start', () => events.includes('a start'));
    const second = (await engine.trigger('rf-latest', { n: 'b', user: 'u1' })).runId;
    expect(await engine.result(second, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'b' });
    const old = await engine.result(first, { timeout: '30s' });
    expect(old.status).toBe('cancelled');
    expect(old.cancel?.by).toBe(`runs.singleton (mode cancel): run ${second} with the same key started`);
    // The new run started only once the old one had ended.
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end']);
    // A burst while one runs: each new run cancels the ones of its key before it (running or
    // waiting); one run of the burst is left, and runs.
    const holder = (await engine.trigger('rf-latest', { n: 'c', user: 'u2', hold: true })).runId;
    await until('the holder of u2 to start', () => events.includes('c start'));
    const burst = [(await engine.trigger('rf-latest', { n: 'd', user: 'u2', hold: true })).runId, (await engine.trigger('rf-latest', { n: 'e', user: 'u2', hold: true })).runId];
    expect((await engine.result(holder, { timeout: '30s' })).status).toBe('cancelled');
    // The earlier of the two may have started (the holder's end granted it) before the later
    // one cancelled it: which one is left depends on the order they reached the key.
    let cancelled: string | undefined;
    await until('a run of the burst to be cancelled', async () => {
      for (const id of burst) if ((await engine.runs.get(id)).status === 'cancelled') cancelled = id;
      return cancelled !== undefined;
    }, 30_000).catch(async (err: Error) => {
      // What each run of the burst was doing, to tell a lost cancel from a slow one.
      const seen = await Promise.all(burst.map(async (id) => JSON.stringify({ id, ...(await engine.runs.get(id)), steps: undefined, input: undefined })));
      throw new Error(`${err.message}; the burst: ${seen.join(' ')}; events ${events.join(', ')}`);
    });
    const survivor = burst.find((id) => id !== cancelled)!;
    await engine.signal(survivor, 'go', null);
    expect((await engine.result(survivor, { timeout: '30s' })).status).toBe('succeeded');
    // 90 s: with room past each 30 s wait above, a wait that hangs names itself.
  }, 90_000);

  test('run flow: singleton cancel: a burst of five started at once leaves exactly one, every other run ends cancelled (none failed), no slot left held', async () => {
    const wf = workflow('rf-burst', { runs: { singleton: { key: () => 'k', mode: 'cancel' } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.waitForEvent('go');
        return input.n;
      });
    });
    const { engine } = await boot([wf]);
    // At once: a later run's cancel can reach an earlier one while that one is still in line
    // or cancelling the runs before it (on Restate such a run once ended failed with
    // "Cancelled" and left its ask in the line: the survivor then waited behind a dead run).
    const ids = await Promise.all([1, 2, 3, 4, 5].map(async (n) => (await engine.trigger('rf-burst', { n })).runId));
    const ended: string[] = [];
    await until('four runs of the burst to end', async () => {
      ended.length = 0;
      for (const id of ids) if (['cancelled', 'failed', 'succeeded'].includes((await engine.runs.get(id)).status)) ended.push(id);
      return ended.length >= 4;
    }, 60_000).catch(async (err: Error) => {
      const seen = await Promise.all(ids.map(async (id) => { const v = await engine.runs.get(id); return `${(v.input as { n?: number } | undefined)?.n}:${v.status}${v.queued ? `(queued ${v.queued.ahead} ahead, ${v.queued.running} running)` : ''}`; }));
      throw new Error(`${err.message}: ${seen.join(' ')}`);
    });
    const survivor = ids.find((id) => !ended.includes(id))!;
    for (const id of ended) expect((await engine.runs.get(id)).status, id).toBe('cancelled');
    await until('the survivor to wait for its event', async () => (await engine.runs.get(survivor)).steps.some((s) => s.status === 'waiting'), 60_000);
    await engine.signal(survivor, 'go', null);
    expect(await engine.result(survivor, { timeout: '30s' })).toMatchObject({ status: 'succeeded' });
    // The key is free again: a new run starts and ends.
    const next = (await engine.trigger('rf-burst', { n: 6 })).runId;
    await until('the next run to wait for its event', async () => (await engine.runs.get(next)).steps.some((s) => s.status === 'waiting'), 60_000);
    await engine.signal(next, 'go', null);
    expect(await engine.result(next, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 6 });
  }, 150_000);

  test('run flow: rate limit drops the starts over the limit, per key, recorded as skipped with the reason (runs list, why); bad config refused', async () => {
    const ran: string[] = [];
    const wf = workflow('rf-rated', { runs: { rateLimit: { limit: 2, period: '1h', key: (i: { user: string }) => i.user } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('work', () => void ran.push(input.n)));
    });
    const { engine } = await boot([wf]);
    const ids: string[] = [];
    for (const [n, user] of [['a1', 'a'], ['a2', 'a'], ['a3', 'a'], ['b1', 'b']]) ids.push((await engine.trigger('rf-rated', { n, user })).runId);
    const views = await Promise.all(ids.map((id) => engine.result(id, { timeout: '20s' })));
    const skippedIds = views.filter((v) => (v.output as { outcome?: string } | undefined)?.outcome === 'skipped').map((v) => v.runId);
    // Which of key a's three runs is dropped depends on the order they reach the limit.
    expect(skippedIds).toHaveLength(1);
    expect(ids.slice(0, 3)).toContain(skippedIds[0]);
    expect(ran.filter((n) => n.startsWith('a'))).toHaveLength(2);
    expect(ran).toContain('b1');
    const reason = "runs.rateLimit: 2 starts per 1h for key 'a' reached";
    const listed = (await engine.runs.list({ workflow: 'rf-rated' })).find((r) => r.runId === skippedIds[0]);
    expect(listed).toMatchObject({ status: 'succeeded', output: { outcome: 'skipped', reason } });
    expect((await engine.runs.explain(skippedIds[0]!)).summary).toContain(`was skipped: ${reason}`);
    expect(() => workflow('rf-bad-limit', { runs: { rateLimit: { limit: 0, period: '1m' } } }, (w) => w.run(async () => 1))).toThrow(/^workflow 'rf-bad-limit' options\.runs\.rateLimit\.limit: /);
    expect(() => workflow('rf-bad-period', { runs: { rateLimit: { limit: 1, period: -5 } } }, (w) => w.run(async () => 1))).toThrow(/^workflow 'rf-bad-period' options\.runs\.rateLimit\.period: /);
    await expect(engine.trigger('rf-rated', { n: 'x' })).rejects.toThrow(/^workflow 'rf-rated' runs\.rateLimit\.key: the key function returned undefined, not a string$/);
  });

  test('run flow: a rate limit counts a run once, also when it then waits in its queue\'s line: runs within the limit all start', async () => {
    const ran: string[] = [];
    const one = queue('rf-one', { concurrency: 1 });
    const wf = workflow('rf-rated-queued', { runs: { queue: one, rateLimit: { limit: 3, period: '1h' } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('work', async () => {
        await new Promise((r) => setTimeout(r, 100));
        ran.push(input.n);
      }));
    });
    const { engine } = await boot([wf]);
    const ids: string[] = [];
    for (const n of ['r1', 'r2', 'r3']) ids.push((await engine.trigger('rf-rated-queued', { n })).runId);
    const views = await Promise.all(ids.map((id) => engine.result(id, { timeout: '30s' })));
    // Three starts, a limit of three: none is skipped, though two of them waited in line and
    // were admitted again at their grant.
    expect(views.map((v) => [v.status, (v.output as { outcome?: string } | undefined)?.outcome])).toEqual([['succeeded', undefined], ['succeeded', undefined], ['succeeded', undefined]]);
    expect(ran.sort()).toEqual(['r1', 'r2', 'r3']);
    const fourth = await engine.trigger('rf-rated-queued', { n: 'r4' });
    expect((await engine.result(fourth.runId, { timeout: '30s' })).output).toMatchObject({ outcome: 'skipped' });
  });

  test('run flow: throttle spreads starts: a rate-limited queue as runs.queue delays starts; no window of the period holds more than the limit', async () => {
    const starts: number[] = [];
    const period = 600;
    const throttle = queue('throttle', { rateLimit: { limit: 2, period } });
    const wf = workflow('rf-throttle', { runs: { queue: throttle } }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('begin', () => void starts.push(Date.now())));
    });
    const { engine } = await boot([wf]);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await engine.trigger('rf-throttle', { i })).runId);
    for (const id of ids) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
    expect(starts).toHaveLength(6);
    starts.sort((a, b) => a - b);
    // At most 2 starts in any window of `period`: the 3rd start after any start is a period
    // on. A body starts a little after its run's start was granted (a dispatch, a step), and
    // not by the same delay each time: `margin` allows that, far below the period it tests.
    const margin = 150;
    for (let i = 0; i + 2 < starts.length; i++) expect(starts[i + 2]! - starts[i]!).toBeGreaterThanOrEqual(period - margin);
    // Six starts, two per window: not one burst.
    expect(starts[5]! - starts[0]!).toBeGreaterThanOrEqual(2 * period - margin);
  });
}
