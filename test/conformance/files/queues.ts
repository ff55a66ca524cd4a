// Flow control THROUGH THE RUNNER (issue 39, docs/flow-control.md): step-level queues in a
// workflow file. The child asks the engine for a slot over the step protocol; the engine
// holds it and releases it when the step's attempt ends. Same names and assertions as the
// in-process cases (test/conformance/queues.ts), each made from the bodies' own start and
// end times, which the bodies write to the flow's ./out directory.
import { expect } from 'vitest';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

interface Span {
  key: string;
  start: number;
  end: number;
}

/** The spans the bodies wrote (`hit('spans', JSON line)`). */
const spansOf = (text: string): Span[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Span);

/** The most spans running at one instant (an end at the same ms as a start is before it). */
function mostAtOnce(spans: Span[]): number {
  const events = spans.flatMap((s) => [[s.start, 1], [s.end, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of events) most = Math.max(most, (now += d));
  return most;
}

/** A body that notes its span (and its start at once, so the test sees it running). */
const SPAN_BODY = `async (key: string, name: string) => {
  const start = Date.now();
  hit('started', key + '\\n');
  await gate(name);
  await new Promise((r) => setTimeout(r, 5));
  hit('spans', JSON.stringify({ key, start, end: Date.now() }) + '\\n');
}`;

export function queueFileScenarios({ test, boot }: FileKit): void {
  test('queue: never more than concurrency bodies at once, in the queue and per key', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
const busy = queue('busy', { concurrency: 3, key: { concurrency: 1 } });
const body = ${SPAN_BODY};
export default workflow('q-busy', { permissions: ${OUT_PERMISSIONS}, queues: [busy] }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    await step.do('call', { queue: 'busy', key: input.key }, () => body(input.key, 'go'));
    return input.key;
  });
});`);
    const { engine } = rig;
    // 8 runs over 4 keys (12 in-process: each run of a file is a Deno child of its own).
    const runs = [];
    for (let i = 0; i < 8; i++) runs.push((await engine.trigger('q-busy', { key: `k${i % 4}` })).runId);
    // The limit binds: 3 bodies hold the slots (held by the gate) while the other 5 are in line.
    await until('the slots to fill and the rest to wait', async () => rig.text('started').split('\n').length - 1 >= 3 && (await engine.runs.list({ queue: 'busy' })).length === 5, 90_000);
    rig.open('go');
    for (const id of runs) expect((await engine.result(id, { timeout: '90s' })).status).toBe('succeeded');
    const spans = spansOf(rig.text('spans'));
    expect(spans).toHaveLength(8);
    expect(mostAtOnce(spans)).toBe(3);
    for (const k of ['k0', 'k1', 'k2', 'k3']) expect(mostAtOnce(spans.filter((s) => s.key === k))).toBe(1);
  }, 180_000);

  test('queue: a run holds no slot while it sleeps', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
const one = queue('one', { concurrency: 1 });
const note = async (key: string) => {
  const start = Date.now();
  await new Promise((r) => setTimeout(r, 20));
  hit('spans', JSON.stringify({ key, start, end: Date.now() }) + '\\n');
};
export default workflow('q-sleep', { permissions: ${OUT_PERMISSIONS}, queues: [one] }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    await step.do('first', { queue: one }, () => note(input.who + '.first'));
    // 4 s (1 s in-process): b's child must start and run its first body meanwhile.
    if (input.who === 'a') await step.sleep('nap', 4000);
    await step.do('second', { queue: 'one' }, () => note(input.who + '.second'));
  });
});`);
    const { engine } = rig;
    const { runId: a } = await engine.trigger('q-sleep', { who: 'a' });
    await until('a to sleep', async () => (await engine.runs.get(a)).status === 'sleeping', 60_000);
    const { runId: b } = await engine.trigger('q-sleep', { who: 'b' });
    expect((await engine.result(b, { timeout: '60s' })).status).toBe('succeeded');
    expect((await engine.result(a, { timeout: '60s' })).status).toBe('succeeded');
    const spans = Object.fromEntries(spansOf(rig.text('spans')).map((s) => [s.key, s]));
    // b's first body ran while a slept in between its own two: a's slot was free.
    expect(spans['b.first']!.start).toBeGreaterThanOrEqual(spans['a.first']!.end);
    expect(spans['b.first']!.end).toBeLessThanOrEqual(spans['a.second']!.start);
    expect(Object.keys(spans).sort()).toEqual(['a.first', 'a.second', 'b.first', 'b.second']);
  }, 120_000);

  test('queue: a run cancelled while its step waits for a slot leaves the line; its body never runs', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
const line = queue('cancel-line', { concurrency: 1 });
export default workflow('q-cancel', { permissions: ${OUT_PERMISSIONS}, queues: [line] }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) =>
    step.do('call', { queue: line }, async () => {
      hit('ran', input.who + '\\n');
      if (input.who === 'holder') await gate('holder');
    }));
});`);
    const { engine } = rig;
    const { runId: holder } = await engine.trigger('q-cancel', { who: 'holder' });
    await until('the holder to run', () => rig.text('ran') === 'holder\n', 60_000);
    const { runId: victim } = await engine.trigger('q-cancel', { who: 'victim' });
    await until('the victim to queue', async () => (await engine.runs.get(victim)).queued !== undefined, 60_000);
    const { runId: next } = await engine.trigger('q-cancel', { who: 'next' });
    await until('the next to queue', async () => (await engine.runs.get(next)).queued?.ahead === 1, 60_000);
    await engine.runs.cancel(victim);
    expect((await engine.result(victim, { timeout: '60s' })).status).toBe('cancelled');
    expect((await engine.runs.get(next)).queued?.ahead).toBe(0);
    rig.open('holder');
    expect((await engine.result(holder, { timeout: '60s' })).status).toBe('succeeded');
    expect((await engine.result(next, { timeout: '60s' })).status).toBe('succeeded');
    expect(rig.text('ran')).toBe('holder\nnext\n');
  }, 120_000);

  test('queue: the rate limit is never exceeded in any window', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
const rated = queue('rated', { rateLimit: { limit: 3, period: 400 } });
export default workflow('q-rated', { permissions: ${OUT_PERMISSIONS}, queues: [rated] }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('call', { queue: rated }, () => void hit('seen-' + input.i, String(Date.now()))));
});`);
    const { engine } = rig;
    const runs = [];
    for (let i = 0; i < 9; i++) runs.push((await engine.trigger('q-rated', { i })).runId);
    const grants: number[] = [];
    for (const [i, id] of runs.entries()) {
      const done = await engine.result(id, { timeout: '90s' });
      expect(done.status).toBe('succeeded');
      // What the engine recorded: a queued step started when its slot was granted (the time
      // the rate limit counted), and its body ran after that.
      const at = Date.parse(done.steps[0]!.startedAt!);
      expect(Number(rig.text(`seen-${i}`))).toBeGreaterThanOrEqual(at);
      grants.push(at);
    }
    grants.sort((a, b) => a - b);
    // At most 3 starts in any window of 400 ms: the 4th start after any start is 400 ms on.
    for (let i = 0; i + 3 < grants.length; i++) expect(grants[i + 3]! - grants[i]!).toBeGreaterThanOrEqual(400);
  }, 180_000);

  test('queue: a cold key starts within one slot turnover of a hot key with many queued', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
const fair = queue('fair', { concurrency: 1 });
export default workflow('q-fair', { permissions: ${OUT_PERMISSIONS}, queues: [fair] }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) =>
    step.do('call', { queue: 'fair', key: input.key }, async () => {
      hit('order', input.key + '\\n');
      // The first hot body holds the only slot until the cold run is in line.
      if (input.hold) await gate('cold-queued');
    }));
});`);
    const { engine } = rig;
    const order = () => rig.text('order').split('\n').filter((l) => l !== '');
    // 1 + 59 hot runs, as in-process: each run of a file is a Deno child of its own, alive
    // while it waits in line (61 children: ~30 s on SQLite, ~41 s on Restate, once each on a
    // loaded 2-core machine).
    const HOT_WAITING = 59;
    const hot = [(await engine.trigger('q-fair', { key: 'hot', hold: true })).runId];
    await until('one hot body to hold the slot', () => order().length === 1, 60_000);
    for (let i = 0; i < HOT_WAITING; i++) hot.push((await engine.trigger('q-fair', { key: 'hot' })).runId);
    await until(`${HOT_WAITING} hot runs to wait`, async () => (await engine.runs.list({ queue: 'fair' })).length === HOT_WAITING, 120_000);
    const { runId: cold } = await engine.trigger('q-fair', { key: 'cold' });
    await until('the cold run to queue', async () => (await engine.runs.get(cold)).queued !== undefined, 60_000);
    rig.open('cold-queued');
    expect((await engine.result(cold, { timeout: '90s' })).status).toBe('succeeded');
    // The slot's next holder after the running hot body is the cold one, ahead of 59 hot.
    expect(order().slice(0, 2)).toEqual(['hot', 'cold']);
    for (const id of hot) expect((await engine.result(id, { timeout: '120s' })).status).toBe('succeeded');
    expect(order()).toHaveLength(HOT_WAITING + 2);
  }, 300_000);

  test('queue: bodies waiting for a slot survive a restart and run in their order', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
const durable = queue('durable', { concurrency: 1 });
export default workflow('q-restart', { permissions: ${OUT_PERMISSIONS}, queues: [durable] }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) =>
    step.do('call', { queue: 'durable' }, async () => {
      hit('started', input.i + '\\n');
      // The first body holds the only slot until the engine is restarted.
      if (input.i === 0) await gate('restarted');
      return input.i;
    }));
});`);
    let engine = rig.engine;
    const started = () => rig.text('started').split('\n').filter((l) => l !== '').map(Number);
    const runs = [];
    runs.push((await engine.trigger('q-restart', { i: 0 })).runId);
    await until('the first body to hold the slot', () => started().length === 1, 60_000);
    for (let i = 1; i <= 4; i++) {
      const { runId } = await engine.trigger('q-restart', { i });
      runs.push(runId);
      await until(`run ${i} to queue`, async () => (await engine.runs.get(runId)).queued !== undefined, 60_000);
    }
    const waiting = await engine.runs.get(runs[4]!);
    expect(waiting.queued).toMatchObject({ queue: 'durable', running: 1, limit: 1, ahead: 3 });
    expect((await engine.runs.explain(runs[4]!)).summary).toContain("queued in 'durable': 1 of 1 running, 3 ahead");
    engine = await rig.restart();
    rig.open('restarted');
    for (const id of runs) expect((await engine.result(id, { timeout: '90s' })).status).toBe('succeeded');
    // After the restart: the interrupted body first again, then the waiters in their order.
    expect(started().slice(1)).toEqual([0, 1, 2, 3, 4]);
    // Waiting for a slot is not an attempt: each waiter's body ran once.
    for (const id of runs.slice(1)) expect((await engine.runs.get(id)).steps[0]).toMatchObject({ name: 'call', status: 'succeeded', attempts: 1 });
  }, 180_000);

  test('queue: an unknown queue name or a key that is not a string fails the step, naming it', async () => {
    const rig = await boot(`
import { queue } from '@tranquil/sdk';
export default workflow('q-bad', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('call', input.bad === 'name' ? { queue: 'nope' } : { queue: queue('k', { concurrency: 1 }), key: 7 as unknown as string }, () => 1));
});`);
    const { engine } = rig;
    const byName = await engine.result((await engine.trigger('q-bad', { bad: 'name' })).runId, { timeout: '60s' });
    expect(byName.status).toBe('failed');
    expect(byName.error?.message).toMatch(/unknown queue 'nope'/);
    const byKey = await engine.result((await engine.trigger('q-bad', { bad: 'key' })).runId, { timeout: '60s' });
    expect(byKey.status).toBe('failed');
    expect(byKey.error?.message).toMatch(/step 'call' options\.key: must be a string/);
  });

  test('queue (files): a file takes slots only of the queues it declares, however it names them', async () => {
    // Another file declares 'shared' and holds its one slot; a file that did not declare it
    // asks by name and by a definition of its own: both fail the step (not retried), naming
    // the queue, and neither takes the slot from the holder.
    const rig = await boot([`
import { queue } from '@tranquil/sdk';
const shared = queue('shared', { concurrency: 1 });
export default workflow('q-owner', { permissions: ${OUT_PERMISSIONS}, queues: [shared] }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('hold', { queue: shared }, async () => {
    hit('held');
    await gate('owner');
    return 'owner';
  }));
});`, `
import { queue } from '@tranquil/sdk';
export default workflow('q-intruder', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('take', { queue: input.byName ? 'shared' : queue('shared', { concurrency: 100 }) }, () => {
    hit('intruded');
    return 'took';
  }));
});`]);
    const { engine } = rig;
    const { runId: owner } = await engine.trigger('q-owner', null);
    await until('the owner to hold the slot', () => rig.hits('held') === 1, 60_000);
    for (const byName of [true, false]) {
      const r = await engine.result((await engine.trigger('q-intruder', { byName })).runId, { timeout: '60s' });
      expect(r.status).toBe('failed');
      expect(r.error?.message).toMatch(/step 'take': unknown queue 'shared': a workflow file may name only the queues it declares/);
      expect(r.steps[0]).toMatchObject({ name: 'take', attempts: 1 });
    }
    expect(rig.hits('intruded')).toBe(0);
    rig.open('owner');
    expect((await engine.result(owner, { timeout: '60s' })).output).toBe('owner');
  }, 120_000);
}

/** Run-level flow control in a file, data only (docs/flow-control.md, In workflow files). */
export function runFlowFileScenarios({ test, boot }: FileKit): void {
  test('run flow (files): runs.queue holds a run pending in line while the slot is held; runs.singleton skip records the second run as skipped', async () => {
    const rig = await boot([`
import { queue } from '@tranquil/sdk';
const one = queue('one-run', { concurrency: 1 });
export default workflow('rq-file', { permissions: ${OUT_PERMISSIONS}, runs: { queue: one } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('work', async () => {
    hit('rq', input.i + '\\n');
    if (input.i === 0) await gate('rq');
    return input.i;
  }));
});`, `
export default workflow('single-file', { permissions: ${OUT_PERMISSIONS}, runs: { singleton: { mode: 'skip' } } }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('work', async () => {
    hit('single');
    await gate('single');
    return 'ran';
  }));
});`]);
    const { engine } = rig;
    const { runId: first } = await engine.trigger('rq-file', { i: 0 });
    await until('the first run to hold the slot', () => rig.text('rq') === '0\n', 60_000);
    const { runId: second } = await engine.trigger('rq-file', { i: 1 });
    await until('the second run to wait in line', async () => (await engine.runs.get(second)).queued !== undefined, 60_000);
    expect(await engine.runs.get(second)).toMatchObject({ status: 'pending', queued: { queue: 'one-run', running: 1, limit: 1 } });
    rig.open('rq');
    expect((await engine.result(first, { timeout: '60s' })).output).toBe(0);
    expect((await engine.result(second, { timeout: '60s' })).output).toBe(1);
    expect(rig.text('rq')).toBe('0\n1\n');

    const { runId: holder } = await engine.trigger('single-file', null);
    await until('the singleton to run', () => rig.hits('single') === 1, 60_000);
    const skipped = await engine.result((await engine.trigger('single-file', null)).runId, { timeout: '60s' });
    expect(skipped.status).toBe('succeeded');
    expect(skipped.output).toMatchObject({ outcome: 'skipped' });
    expect(JSON.stringify(skipped.output)).toContain(`runs.singleton (mode skip): run ${holder}`);
    rig.open('single');
    expect((await engine.result(holder, { timeout: '60s' })).output).toBe('ran');
    expect(rig.hits('single')).toBe(1);
  }, 180_000);

  test('run flow (files): keys and priority read from the input with fromInput(): a singleton per key, a run queue per key served by priority; a missing key refused at trigger', async () => {
    const rig = await boot([`
import { fromInput } from '@tranquil/sdk';
export default workflow('single-keyed', { permissions: ${OUT_PERMISSIONS}, runs: { singleton: { mode: 'skip', key: fromInput('user.id') } } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('work', async () => {
    hit('sk', input.user.id + '\\n');
    if (input.user.id === 'u1') await gate('sk');
    return input.user.id;
  }));
});`, `
import { fromInput, queue } from '@tranquil/sdk';
const line = queue('keyed-line', { concurrency: 1 });
export default workflow('prio-file', { permissions: ${OUT_PERMISSIONS}, runs: { queue: line, key: fromInput('tenant'), priority: fromInput('p') } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('work', async () => {
    hit('pr', input.name + '\\n');
    if (input.name === 'holder') await gate('pr');
    return input.name;
  }));
});`]);
    const { engine } = rig;
    // Singleton per key: a second u1 is skipped while the first runs; u2 is another key.
    const { runId: u1 } = await engine.trigger('single-keyed', { user: { id: 'u1' } });
    await until('u1 to run', () => rig.text('sk') === 'u1\n', 60_000);
    const again = await engine.result((await engine.trigger('single-keyed', { user: { id: 'u1' } })).runId, { timeout: '60s' });
    expect(again.output).toMatchObject({ outcome: 'skipped' });
    expect(JSON.stringify(again.output)).toContain(`runs.singleton (mode skip): run ${u1}`);
    expect((await engine.result((await engine.trigger('single-keyed', { user: { id: 'u2' } })).runId, { timeout: '60s' })).output).toBe('u2');
    // A key the input does not have is refused when the run is asked for, naming the option.
    await expect(engine.trigger('single-keyed', { user: {} })).rejects.toThrow(/runs\.singleton\.key: the key function returned undefined, not a string/);
    rig.open('sk');
    expect((await engine.result(u1, { timeout: '60s' })).output).toBe('u1');

    // A run queue of one slot: the holder blocks it; in line, the higher priority goes first
    // whatever its key and the order it came in.
    const { runId: holder } = await engine.trigger('prio-file', { name: 'holder', tenant: 't1', p: 0 });
    await until('the holder to run', () => rig.text('pr') === 'holder\n', 60_000);
    const { runId: low } = await engine.trigger('prio-file', { name: 'low', tenant: 't2', p: 1 });
    const { runId: high } = await engine.trigger('prio-file', { name: 'high', tenant: 't3', p: 5 });
    await until('both to wait in line', async () => (await engine.runs.get(low)).queued !== undefined && (await engine.runs.get(high)).queued !== undefined, 60_000);
    await expect(engine.trigger('prio-file', { name: 'bad', tenant: 't4', p: 'x' })).rejects.toThrow(/runs\.priority: the priority function returned string, not an integer/);
    rig.open('pr');
    for (const id of [holder, low, high]) expect((await engine.result(id, { timeout: '60s' })).status).toBe('succeeded');
    expect(rig.text('pr')).toBe('holder\nhigh\nlow\n');
  }, 180_000);

  test('debounce (files): a burst of triggers per key (fromInput) becomes one run with its last input; a missing key refused at trigger', async () => {
    const rig = await boot([`
import { fromInput } from '@tranquil/sdk';
export default workflow('deb-file', { permissions: ${OUT_PERMISSIONS}, debounce: { period: '2s', key: fromInput('user') } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('work', async () => {
    hit('deb', input.user + ':' + input.n + '\\n');
    return input.n;
  }));
});`]);
    const { engine } = rig;
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) ids.push((await engine.trigger('deb-file', { user: n % 2 === 0 ? 'a' : 'b', n })).runId);
    // One burst (one run id) per key.
    expect(new Set(ids.filter((_, n) => n % 2 === 0)).size).toBe(1);
    expect(new Set(ids.filter((_, n) => n % 2 === 1)).size).toBe(1);
    await expect(engine.trigger('deb-file', { n: 99 })).rejects.toThrow(/debounce\.key: the key function returned undefined, not a string/);
    expect((await engine.result(ids[0]!, { timeout: '60s' })).output).toBe(8);
    expect((await engine.result(ids[1]!, { timeout: '60s' })).output).toBe(9);
    expect(rig.text('deb').split('\n').filter(Boolean).sort()).toEqual(['a:8', 'b:9']);
  }, 180_000);
}
