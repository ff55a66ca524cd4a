// Conformance scenarios for flow control (issue 39, docs/flow-control.md): step bodies in a
// queue(). Every assertion is made from the bodies' own start and end times.
import { expect, onTestFinished } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Span {
  key: string;
  start: number;
  end: number;
}

export function queueScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('queue: never more than concurrency bodies at once, in the queue and per key', async () => {
    // Counted by the bodies themselves: a shared counter moved at each body's start and end.
    const running = { all: 0, max: 0, key: {} as Record<string, number>, keyMax: {} as Record<string, number> };
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const q = queue('busy', { concurrency: 3, key: { concurrency: 1 } });
    const wf = workflow('q-busy', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('call', { queue: 'busy', key: input.key }, async () => {
          const k = input.key as string;
          running.max = Math.max(running.max, ++running.all);
          running.keyMax[k] = Math.max(running.keyMax[k] ?? 0, (running.key[k] = (running.key[k] ?? 0) + 1));
          await gate;
          await pause(5);
          running.all--;
          running.key[k]!--;
        });
        return input.key;
      });
    });
    const { engine } = await boot([wf]);
    const runs = [];
    for (let i = 0; i < 12; i++) runs.push((await engine.trigger('q-busy', { key: `k${i % 4}` })).runId);
    // The limit binds: 3 bodies hold the slots (held by the gate) while the other 9 are in line.
    await until('the slots to fill and the rest to wait', async () => running.all >= 3 && (await engine.runs.list({ queue: 'busy' })).length === 12 - running.all);
    open();
    for (const id of runs) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
    expect(running.all).toBe(0);
    expect(running.max).toBe(3);
    expect(running.keyMax).toEqual({ k0: 1, k1: 1, k2: 1, k3: 1 });
  });

  test('queue: the rate limit is never exceeded in any window', async () => {
    const seen: Record<string, number> = {};
    const q = queue('rated', { rateLimit: { limit: 3, period: 400 } });
    const wf = workflow('q-rated', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('call', { queue: q }, () => void (seen[input.i] = Date.now())));
    });
    const { engine } = await boot([wf]);
    const runs = [];
    for (let i = 0; i < 9; i++) runs.push((await engine.trigger('q-rated', { i })).runId);
    const grants: number[] = [];
    for (const [i, id] of runs.entries()) {
      const done = await engine.result(id, { timeout: '30s' });
      expect(done.status).toBe('succeeded');
      // What the engine recorded: a queued step started when its slot was granted (the time
      // the rate limit counted), and its body ran after that.
      const at = Date.parse(done.steps[0]!.startedAt!);
      expect(seen[i]).toBeGreaterThanOrEqual(at);
      grants.push(at);
    }
    grants.sort((a, b) => a - b);
    // At most 3 starts in any window of 400 ms: the 4th start after any start is 400 ms on.
    for (let i = 0; i + 3 < grants.length; i++) expect(grants[i + 3]! - grants[i]!).toBeGreaterThanOrEqual(400);
  });

  test('queue: a cold key starts within one slot turnover of a hot key with many queued', async () => {
    const order: string[] = [];
    let open!: () => void;
    const held = new Promise<void>((r) => (open = r));
    const q = queue('fair', { concurrency: 1 });
    const wf = workflow('q-fair', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) =>
        step.do('call', { queue: 'fair', key: input.key }, async () => {
          // The first hot body holds the only slot until the cold run is in line.
          if (order.push(input.key) === 1) await held;
          else await pause(2);
        }));
    });
    const { engine } = await boot([wf]);
    const hot = [];
    for (let i = 0; i < 60; i++) hot.push((await engine.trigger('q-fair', { key: 'hot' })).runId);
    await until('one hot body to run and 59 to wait', async () => order.length === 1 && (await engine.runs.list({ queue: 'fair' })).length === 59);
    const { runId: cold } = await engine.trigger('q-fair', { key: 'cold' });
    await until('the cold run to queue', async () => (await engine.runs.get(cold)).queued !== undefined);
    open();
    expect((await engine.result(cold, { timeout: '30s' })).status).toBe('succeeded');
    // The slot's next holder after the running hot body is the cold one, ahead of 59 hot.
    expect(order.slice(0, 2)).toEqual(['hot', 'cold']);
    for (const id of hot) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
    expect(order).toHaveLength(61);
    // 61 runs through one slot, one after another: on Restate each handover is a few round
    // trips through restate-server (release, the queue object, the next awakeable), ~0.3 s
    // each on a loaded 2-core machine.
  }, 120_000);

  test('queue: a run holds no slot while it sleeps', async () => {
    const spans: Record<string, Span> = {};
    const q = queue('one', { concurrency: 1 });
    const wf = workflow('q-sleep', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const body = (name: string) => async () => {
          const start = Date.now();
          await pause(20);
          spans[`${input.who}.${name}`] = { key: input.who, start, end: Date.now() };
        };
        await step.do('first', { queue: q }, body('first'));
        if (input.who === 'a') await step.sleep('nap', 1000);
        await step.do('second', { queue: q }, body('second'));
      });
    });
    const { engine } = await boot([wf]);
    const { runId: a } = await engine.trigger('q-sleep', { who: 'a' });
    await until('a to sleep', async () => (await engine.runs.get(a)).status === 'sleeping');
    const { runId: b } = await engine.trigger('q-sleep', { who: 'b' });
    expect((await engine.result(b, { timeout: '30s' })).status).toBe('succeeded');
    expect((await engine.result(a, { timeout: '30s' })).status).toBe('succeeded');
    // b's first body ran while a slept in between its own two: a's slot was free. (b's
    // second body may meet a's on a slow machine; either order is right then.)
    expect(spans['b.first']!.start).toBeGreaterThanOrEqual(spans['a.first']!.end);
    expect(spans['b.first']!.end).toBeLessThanOrEqual(spans['a.second']!.start);
    expect(Object.keys(spans).sort()).toEqual(['a.first', 'a.second', 'b.first', 'b.second']);
  });

  test('queue: bodies waiting for a slot survive a restart and run in their order', async () => {
    const started: number[] = [];
    let blocked = true;
    const q = queue('durable', { concurrency: 1 });
    const wf = workflow('q-restart', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) =>
        step.do('call', { queue: 'durable' }, async () => {
          started.push(input.i);
          // The first body holds the only slot until the engine is restarted.
          while (input.i === 0 && blocked) await pause(10);
          return input.i;
        }));
    });
    const { engine, dir } = await boot([wf]);
    const runs = [];
    runs.push((await engine.trigger('q-restart', { i: 0 })).runId);
    await until('the first body to hold the slot', () => started.length === 1);
    for (let i = 1; i <= 4; i++) {
      const { runId } = await engine.trigger('q-restart', { i });
      runs.push(runId);
      await until(`run ${i} to queue`, async () => (await engine.runs.get(runId)).queued !== undefined);
    }
    const waiting = await engine.runs.get(runs[4]!);
    expect(waiting.queued).toMatchObject({ queue: 'durable', running: 1, limit: 1, ahead: 3 });
    expect((await engine.runs.explain(runs[4]!)).summary).toContain("queued in 'durable': 1 of 1 running, 3 ahead");
    const second = await restart(engine, [wf], dir);
    blocked = false;
    for (const id of runs) expect((await second.result(id, { timeout: '30s' })).status).toBe('succeeded');
    // After the restart: the interrupted body first again, then the waiters in their order.
    expect(started.slice(1)).toEqual([0, 1, 2, 3, 4]);
    // Waiting for a slot is not an attempt: each waiter's body ran once.
    for (const id of runs.slice(1)) expect((await second.runs.get(id)).steps[0]).toMatchObject({ name: 'call', status: 'succeeded', attempts: 1 });
  });

  // Waiters of a rate-limited queue across a stop of several windows: after the restart
  // they start one per window, from the bodies' own start times (SQLite: places recovered at
  // start; Restate: the object's pending grants). This case does not arrange the bug of
  // seeds 5209279 and 1124 (a run that comes back after its place was granted), so it mostly
  // passed before the fix too (Restate 1 of 1 runs, SQLite 4 of 5; 2026-12-05);
  // test/unit/queue-rate-start.test.ts and queue-snapshot.test.ts do.
  test('queue: a rate limit counts a body when it begins: waiters of a stopped engine do not start together after the restart', async () => {
    const began: Record<number, number> = {};
    const PERIOD = 1000;
    const q = queue('late', { concurrency: 5, rateLimit: { limit: 1, period: PERIOD } });
    const wf = workflow('q-late', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('call', { queue: 'late' }, () => void (began[input.i] = Date.now())));
    });
    const { engine, dir } = await boot([wf]);
    const runs = [(await engine.trigger('q-late', { i: 0 })).runId];
    await until('the first body', () => began[0] !== undefined);
    for (let i = 1; i <= 4; i++) runs.push((await engine.trigger('q-late', { i })).runId);
    await until('the last run to queue', async () => (await engine.runs.get(runs[4]!)).queued !== undefined);
    await engine.stop();
    // Several windows open while no engine runs.
    await pause(5 * PERIOD);
    const second = (await boot([wf], dir)).engine;
    for (const id of runs) expect((await second.result(id, { timeout: '60s' })).status).toBe('succeeded');
    const at = Object.values(began).sort((a, b) => a - b);
    expect(at).toHaveLength(5);
    // One start per window; 50 ms of slack for the moment between the limiter's count and the
    // body's own clock read (the bodies that began together were ~0 ms apart).
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `body starts ${at.map((t) => t - at[0]!).join(', ')} ms`).toBeGreaterThanOrEqual(PERIOD - 50);
  }, 120_000);

  test('queue: a run cancelled while its step waits for a slot leaves the line; its body never runs', async () => {
    const ran: string[] = [];
    let blocked = true;
    const q = queue('cancel-line', { concurrency: 1 });
    const wf = workflow('q-cancel', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) =>
        step.do('call', { queue: q }, async () => {
          ran.push(input.who);
          while (input.who === 'holder' && blocked) await pause(10);
        }));
    });
    const { engine } = await boot([wf]);
    const { runId: holder } = await engine.trigger('q-cancel', { who: 'holder' });
    await until('the holder to run', () => ran.length === 1);
    const { runId: victim } = await engine.trigger('q-cancel', { who: 'victim' });
    await until('the victim to queue', async () => (await engine.runs.get(victim)).queued !== undefined);
    const { runId: next } = await engine.trigger('q-cancel', { who: 'next' });
    await until('the next to queue', async () => (await engine.runs.get(next)).queued?.ahead === 1);
    await engine.runs.cancel(victim);
    expect((await engine.result(victim, { timeout: '20s' })).status).toBe('cancelled');
    expect((await engine.runs.get(next)).queued?.ahead).toBe(0);
    blocked = false;
    expect((await engine.result(holder, { timeout: '20s' })).status).toBe('succeeded');
    expect((await engine.result(next, { timeout: '20s' })).status).toBe('succeeded');
    expect(ran).toEqual(['holder', 'next']);
  });

  test('queues.list: running against the limit, the depth, the busiest keys and the rate window; internal queues only with all', async () => {
    // What the Runs panel's queue rows show (docs/flow-control.md, Watching queues).
    const hold = { open: false };
    onTestFinished(() => void (hold.open = true)); // no body left looping if an assertion failed
    const q = queue('listed', { concurrency: 2, rateLimit: { limit: 50, period: '1m' }, key: { concurrency: 1 } });
    const wf = workflow('q-listed', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('call', { queue: q, key: input.key }, async () => {
        while (!hold.open) await pause(20);
      }));
    });
    const solo = workflow('q-solo', { runs: { singleton: { mode: 'skip' } } }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('never', { timeout: '1h' }));
    });
    const { engine } = await boot([wf, solo]);
    const listed = async () => (await engine.queues.list()).find((x) => x.name === 'listed');
    const soloRun = (await engine.trigger('q-solo', null)).runId;
    const ids: string[] = [];
    for (const key of ['a', 'a', 'a', 'b', 'b', 'c']) ids.push((await engine.trigger('q-listed', { key })).runId);
    await until('4 bodies in line', async () => (await listed())?.waiting === 4);
    const row = (await listed())!;
    expect(row.running).toBe(2);
    expect(row.limits).toEqual({ concurrency: 2, rate: { limit: 50, periodMs: 60_000 }, key: { concurrency: 1 } });
    expect(row.started).toBe(2);
    expect(row.keyCount).toBe(3);
    // Busiest first; which two keys run is whose ask came first (on Restate they ask concurrently).
    expect(row.keys.map((k) => [k.key, k.running + k.waiting])).toEqual([['a', 3], ['b', 2], ['c', 1]]);
    expect(row.keys.every((k) => k.running <= 1)).toBe(true);
    await until('the singleton run to wait', async () => (await engine.runs.get(soloRun)).status === 'waiting');
    expect((await engine.queues.list()).filter((x) => x.name.startsWith('~'))).toEqual([]);
    const internal = (await engine.queues.list({ all: true })).find((x) => x.name === '~singleton.q-solo');
    expect(internal?.internal).toEqual({ option: 'runs.singleton', workflow: 'q-solo' });
    expect(internal?.running).toBe(1);
    await expect(engine.queues.list({ every: true } as never)).rejects.toThrow(/queues\.list options/);
    hold.open = true;
    for (const id of ids) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
    await until('the queue to drain', async () => (await listed())?.running === 0);
    expect(await listed()).toMatchObject({ running: 0, waiting: 0, started: 6 });
    await engine.runs.cancel(soloRun);
  });

  test('queue: a run cancelled while its step waits for a rate window ends at once; the next in line gets that window', async () => {
    // One start per 10 s: the holder's body takes the window; the victim and then `next` wait
    // for the next one. The cancel must not wait for a window (a cancel that did would be
    // delivered at its grant, 10 s on, and `next` would start a window later still). Long
    // enough that a slow trigger on a loaded machine still finds the window shut.
    const PERIOD = 10_000;
    const ran: string[] = [];
    const q = queue('cancel-rate', { rateLimit: { limit: 1, period: PERIOD } });
    const wf = workflow('q-cancel-rate', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('call', { queue: q }, () => void ran.push(input.who)));
    });
    const { engine } = await boot([wf]);
    const { runId: holder } = await engine.trigger('q-cancel-rate', { who: 'holder' });
    expect((await engine.result(holder, { timeout: '20s' })).status).toBe('succeeded');
    const { runId: victim } = await engine.trigger('q-cancel-rate', { who: 'victim' });
    await until('the victim to queue', async () => (await engine.runs.get(victim)).queued !== undefined);
    const { runId: next } = await engine.trigger('q-cancel-rate', { who: 'next' });
    await until('the next to queue', async () => (await engine.runs.get(next)).queued?.ahead === 1);
    await engine.runs.cancel(victim);
    const cancelled = await engine.result(victim, { timeout: '20s' });
    expect(cancelled.status).toBe('cancelled');
    // Ended before the window its grant would have had: it waited for no window.
    const heldAt = Date.parse((await engine.runs.get(holder)).steps[0]!.startedAt!);
    expect(Date.parse(cancelled.updatedAt)).toBeLessThan(heldAt + PERIOD);
    expect((await engine.runs.get(next)).queued?.ahead).toBe(0);
    const done = await engine.result(next, { timeout: '40s' });
    expect(done.status).toBe('succeeded');
    // `next` took the window the victim left: the one right after the holder's.
    expect(Date.parse(done.steps[0]!.startedAt!)).toBeLessThan(heldAt + 2 * PERIOD);
    expect(ran).toEqual(['holder', 'next']);
  }, 90_000);

  test('queue: an unknown queue name or a key that is not a string fails the step, naming it', async () => {
    const wf = workflow('q-bad', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('call', input.bad === 'name' ? { queue: 'nope' } : { queue: queue('k', { concurrency: 1 }), key: 7 as unknown as string }, () => 1));
    });
    const { engine } = await boot([wf]);
    const byName = await engine.result((await engine.trigger('q-bad', { bad: 'name' })).runId, { timeout: '20s' });
    expect(byName.status).toBe('failed');
    expect(byName.error?.message).toMatch(/unknown queue 'nope'/);
    const byKey = await engine.result((await engine.trigger('q-bad', { bad: 'key' })).runId, { timeout: '20s' });
    expect(byKey.status).toBe('failed');
    expect(byKey.error?.message).toMatch(/step 'call' options\.key: must be a string/);
  });
}
