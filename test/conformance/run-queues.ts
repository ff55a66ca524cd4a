// Conformance scenarios for run-level flow control (issue 39, docs/flow-control.md): a
// workflow's `runs: { queue, key }` makes each run hold a slot from its start to its end.
// Assertions are made from the runs' own first and last step times.
import { expect } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export interface Span {
  key: string;
  start: number;
  end: number;
}

/** The most spans open at once (an end and a start at the same instant do not overlap). */
export function maxOverlap(spans: Span[]): number {
  const ev = spans.flatMap((s) => [[s.start, 1], [s.end, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of ev) max = Math.max(max, (open += d));
  return max;
}

export function runQueueScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('run queue: never more runs at once than the limit, in the queue and per key, sleeping included', async () => {
    const spans: Span[] = [];
    const perUser = queue('per-user', { concurrency: 2, key: { concurrency: 1 } });
    const wf = workflow('rq-user', { runs: { queue: perUser, key: (input: { user: string }) => input.user } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const start = await step.do('begin', () => Date.now());
        // A run holds its slot while it sleeps: the next run of its key waits for its end.
        await step.sleep('nap', 30);
        const end = await step.do('end', () => Date.now());
        spans.push({ key: input.user, start, end });
      });
    });
    const { engine } = await boot([wf]);
    const runs = [];
    for (let i = 0; i < 8; i++) runs.push((await engine.trigger('rq-user', { user: `u${i % 3}` })).runId);
    for (const id of runs) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
    expect(spans).toHaveLength(8);
    expect(maxOverlap(spans)).toBe(2);
    for (const k of ['u0', 'u1', 'u2']) expect(maxOverlap(spans.filter((s) => s.key === k))).toBe(1);
  });

  test('run queue: a run over the limit waits pending in line (why, runs list); a cancel in line ends it; a restart keeps the holder and the order', async () => {
    const order: number[] = [];
    const solo = queue('solo', { concurrency: 1 });
    const wf = workflow('rq-solo', { runs: { queue: solo } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('work', () => void order.push(input.n));
        // The first run holds the only slot across the restart, until it is signalled.
        if (input.n === 0) await step.waitForEvent('go');
      });
    });
    const { engine, dir } = await boot([wf]);
    const ids: string[] = [];
    ids.push((await engine.trigger('rq-solo', { n: 0 })).runId);
    await until('the first run to start', () => order.length === 1);
    for (let n = 1; n <= 3; n++) ids.push((await engine.trigger('rq-solo', { n })).runId);
    await until('three runs in line', async () => (await engine.runs.list({ queue: 'solo' })).length === 3);
    const last = await engine.runs.get(ids[3]!);
    expect(last.status).toBe('pending');
    expect(last.queued).toMatchObject({ queue: 'solo', step: '', running: 1, limit: 1, ahead: 2 });
    const why = await engine.runs.explain(ids[3]!);
    expect(why.summary).toContain("is pending: queued in 'solo': 1 of 1 running, 2 ahead");
    expect(why.waitingFor).toMatchObject({ kind: 'queue', queue: 'solo' });
    expect((await engine.runs.list({ queue: 'solo' })).map((r) => r.runId).sort()).toEqual(ids.slice(1).sort());
    // A run cancelled in line ends at once; none of its code runs.
    await engine.runs.cancel(ids[2]!);
    expect((await engine.result(ids[2]!, { timeout: '10s' })).status).toBe('cancelled');
    const second = await restart(engine, [wf], dir);
    // The holder keeps its slot across the restart: nothing in line starts before it ends.
    await new Promise((r) => setTimeout(r, 150));
    expect(order).toEqual([0]);
    expect((await second.runs.get(ids[1]!)).queued).toMatchObject({ queue: 'solo', ahead: 0 });
    await second.signal(ids[0]!, 'go', null);
    for (const id of [ids[0]!, ids[1]!, ids[3]!]) expect((await second.result(id, { timeout: '30s' })).status).toBe('succeeded');
    expect(order).toEqual([0, 1, 3]);
    expect(await second.runs.list({ queue: 'solo' })).toHaveLength(0);
  });

  test('run queue: a key function that throws or returns no string is refused at trigger time, naming it; nothing is stored', async () => {
    const q = queue('keyed', { key: { concurrency: 1 } });
    const wf = workflow('rq-bad-key', { runs: { queue: q, key: (input: { user?: unknown }) => { if (input.user === undefined) throw new Error('no user'); return input.user as string; } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('x', () => 1));
    });
    const { engine } = await boot([wf]);
    await expect(engine.trigger('rq-bad-key', {})).rejects.toThrow(/^workflow 'rq-bad-key' runs\.key: the key function threw: no user$/);
    await expect(engine.trigger('rq-bad-key', { user: 7 })).rejects.toThrow(/^workflow 'rq-bad-key' runs\.key: the key function returned number, not a string$/);
    expect(await engine.runs.list({ workflow: 'rq-bad-key' })).toHaveLength(0);
    const { runId } = await engine.trigger('rq-bad-key', { user: 'u1' });
    expect((await engine.result(runId, { timeout: '10s' })).status).toBe('succeeded');
  });

  test('run queue: a step asking for the queue its run holds fails in one line naming it (it would wait for itself); another queue is fine', async () => {
    const own = queue('own', { concurrency: 1 });
    const other = queue('other', { concurrency: 1 });
    const wf = workflow('rq-own', { queues: [other], runs: { queue: own } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('call', { queue: input === 'own' ? own : 'other' }, () => 'called'));
    });
    const { engine } = await boot([wf]);
    const bad = await engine.result((await engine.trigger('rq-own', 'own')).runId, { timeout: '10s' });
    expect(bad.status).toBe('failed');
    expect(bad.error?.message).toBe("step 'call': queue 'own' is this run's own queue (workflow option runs.queue), whose slot the run holds; a step waiting for it would wait for its own run: give the step another queue");
    // The failed run let its slot go: the next run of the queue starts and its step runs.
    const good = await engine.result((await engine.trigger('rq-own', 'other')).runId, { timeout: '10s' });
    expect(good).toMatchObject({ status: 'succeeded', output: 'called' });
  });

  test('run queue: priority: higher first among the runs in line, over the keys turns; kept across a restart; a bad priority is refused at trigger', async () => {
    const order: string[] = [];
    const line = queue('prio-line', { concurrency: 1 });
    const wf = workflow('rq-prio', { runs: { queue: line, key: (i: { user: string }) => i.user, priority: (i: { p?: number }) => i.p ?? 0 } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('work', () => void order.push(input.n));
        // The first run holds the only slot across the restart, until it is signalled.
        if (input.n === 'holder') await step.waitForEvent('go');
      });
    });
    const { engine, dir } = await boot([wf]);
    const holder = (await engine.trigger('rq-prio', { n: 'holder', user: 'a' })).runId;
    await until('the holder to start', () => order.length === 1);
    await expect(engine.trigger('rq-prio', { n: 'x', user: 'a', p: 1.5 })).rejects.toThrow(/^workflow 'rq-prio' runs\.priority: the priority function returned 1\.5, not an integer from -1000000 to 1000000$/);
    await expect(engine.trigger('rq-prio', { n: 'x', user: 'a', p: 'high' })).rejects.toThrow(/^workflow 'rq-prio' runs\.priority: the priority function returned string, not an integer$/);
    const ids: string[] = [];
    // 'zero' has p: undefined, a value plain JSON lacks: the functions see the input decoded.
    for (const [n, user, p] of [['low', 'a', 1], ['mid', 'b', 5], ['top', 'a', 9], ['zero', 'b', undefined], ['seven', 'b', 7]] as const) {
      ids.push((await engine.trigger('rq-prio', { n, user, p })).runId);
    }
    await until('five runs in line', async () => (await engine.runs.list({ queue: 'prio-line' })).length === 5);
    // `ahead` counts the runs of its key before it: for 'low' (key a), 'top'.
    expect((await engine.runs.get(ids[0]!)).queued).toMatchObject({ queue: 'prio-line', key: 'a', ahead: 1 });
    const second = await restart(engine, [wf], dir);
    await second.signal(holder, 'go', null);
    for (const id of [holder, ...ids]) expect((await second.result(id, { timeout: '30s' })).status).toBe('succeeded');
    // 'mid' (b, 5) before 'low' (a, 1) although key a's turn had come: priority first.
    expect(order).toEqual(['holder', 'top', 'seven', 'mid', 'low', 'zero']);
  });
}
