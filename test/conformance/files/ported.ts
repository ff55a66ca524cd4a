// More cases of the in-process suite THROUGH THE RUNNER (issue 11): race shapes, long
// durations, retry/cancel/signal variants, events and webhooks, each with the name and the
// assertions of the in-process case (concurrency.ts, semantics-*.ts, triggers.ts) and its
// workflow as a file run in Deno children.
//
// Cost: the cases run 5 at a time (it.concurrent) on ONE engine per backend with all their
// flows registered (a restate-server and the describe children are paid once, not per case);
// each flow has its own name and its own `hit` names, so the cases cannot see each other's
// runs or marks. The restart cases share a second engine and ONE restart of it
// (RestartGroup). A case that needs its own config or asserts on engine-wide lists boots its
// own engine (from this file's Rigs: the suite's `boot` is cleaned up after every case,
// which would stop an engine under a case still running beside it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { createEngine, RunStateError, type Engine, type RunView } from '@tranquil/engine';
import { OUT_PERMISSIONS, Rigs, sleep, until, type FlowRig } from './harness.ts';
import type { FileKit } from './suite.ts';

const P = `{ permissions: ${OUT_PERMISSIONS} }`;
const DAY = 86_400_000;
const ODD_NAMES = ['a/b', 'what?now', 'x%2Fy', 'ünï cödé', 'sp ace!1'];

/** The in-process suite's webhook flow as a file: its zod schema crosses to the engine as
 *  JSON Schema (runner/describe.ts), which checks bodies before any run exists. */
const HOOK = `
import { webhook } from '@tranquil/sdk';
import { z } from 'zod';
const signup = z.object({ email: z.string().email(), plan: z.enum(['free', 'pro']).default('free') });
export default workflow('on-signup', ${P}, (w) => {
  w.trigger(webhook({ path: 'signup', validate: signup }));
  w.run(async ({ input, step }) => step.do('welcome', () => 'welcome ' + input.email + ' (' + input.plan + ')'));
});`;

const post = (url: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(url, { method: 'POST', body, headers });

/** The flows of the shared engine, one file each (the prelude gives hit/gate/read). */
const SHARED: Record<string, string> = {
  'all-settled': `
export default workflow('all-settled', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const [a, b] = await Promise.all([step.do('a', () => 'A'), step.do('b', () => 'B')]);
    await step.sleep('nap', 50);
    const settled = await Promise.allSettled([
      step.do('ok', () => 1),
      step.do('bad', { retries: { limit: 1 } }, () => { throw new Error('nope'); }),
    ]);
    return { a, b, settled: settled.map((s) => (s.status === 'fulfilled' ? s.value : s.reason.message)) };
  });
});`,
  'race-sleep': `
export default workflow('race-sleep', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const winner = await Promise.race([
      step.waitForEvent('go').then((v) => 'signal ' + v),
      step.sleep('t', 300).then(() => 'slept'),
    ]);
    const after = await step.do('after', () => 'done');
    return { winner, after };
  });
});`,
  'losing-wait': `
export default workflow('losing-wait', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const first = await Promise.race([step.waitForEvent('go').then(() => 'signal'), step.sleep('t', 100).then(() => 'slept')]);
    const second = await step.waitForEvent('go');
    return { first, second };
  });
});`,
  stubborn: `
export default workflow('stubborn', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await step.sleep('long', '1d');
    } catch {
      // A cleanup that ignores its abort signal and never ends.
      await step.do('stuck-cleanup', () => new Promise(() => {}));
    }
  });
});`,
  'signal-retry': `
export default workflow('signal-retry', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const got = await step.waitForEvent('go');
    return step.do('use', { retries: { limit: 1 } }, () => {
      if (read('sr-healthy') !== 'yes') throw new Error('not ready');
      return got;
    });
  });
});`,
  'long-timeout': `
export default workflow('long-timeout', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('slow', { timeout: '30d', retries: { limit: 1 } }, async () => {
    hit('lt-attempts');
    await new Promise((r) => setTimeout(r, 100));
    return 'done';
  }));
});`,
  'void-step': `
export default workflow('void-step', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const first = await step.do('nothing', () => {});
    await step.sleep('nap', 50);
    const again = await step.do('nothing-async', async () => undefined);
    return { first: first === undefined, again: again === undefined, nul: (await step.do('null', () => null)) === null };
  });
});`,
  'timeout-order': `
export default workflow('timeout-order', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    let first;
    try {
      await Promise.all([
        step.waitForEvent('go', { timeout: 0 }),
        step.do('bad', { retries: { limit: 1 } }, () => { throw new Error('bad'); }),
      ]);
      first = 'none';
    } catch (e) {
      first = e.name;
    }
    const seen = await step.do('seen', () => first);
    await step.sleep('replay', 50);
    return { first, seen };
  });
});`,
  'race-timeout': `
export default workflow('race-timeout', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await Promise.race([step.waitForEvent('go', { timeout: 200 }), step.sleep('t', 60_000)]);
      return 'no timeout';
    } catch (err) {
      return err instanceof TimeoutError ? 'timed out' : 'other: ' + err.message;
    }
  });
});`,
  'fresh-retry': `
export default workflow('fresh-retry', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const cart = await step.do('load-cart', () => ({ total: 100 }));
    cart.total += 10;
    input.seen++;
    await step.do('pay', { retries: { limit: 1 } }, () => {
      if (read('fr-healthy') !== 'yes') throw new Error('payments down');
      return 'ok';
    });
    return { total: cart.total, seen: input.seen };
  });
});`,
  combinators: `
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const body = (name, value) => async () => {
  hit('comb-' + name);
  await pause(Math.floor(Math.random() * 60));
  return value;
};
export default workflow('combinators', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => step.do('all-' + i, body('all-' + i, 'v' + i))));
    // The losers are 1.5 s / 1 s behind, not 0.15 / 0.1: under CI load the Restate run through
    // the runner once journaled the 10 ms body after the 150 ms one ('slow' won).
    const any = await Promise.any([
      step.do('any-bad', () => { throw new TerminalError('no'); }),
      step.do('any-slow', async () => (await pause(1500), 'slow')),
      step.do('any-fast', async () => (await pause(10), 'fast')),
    ]);
    const settled = await Promise.allSettled([
      step.do('settle-ok', body('settle-ok', 'ok')),
      step.do('settle-bad', () => { throw new TerminalError('bad'); }),
      step.sleep('settle-nap', 30),
    ]);
    const race = await Promise.race([step.sleep('race-nap', 1000).then(() => 'nap'), step.do('race-do', async () => (await pause(5), 'do'))]);
    await step.sleep('replay', 30);
    return { all, any, settled: settled.map((r) => (r.status === 'fulfilled' ? (r.value ?? 'slept') : r.reason.message)), race };
  });
});`,
  'suspending-races': `
export default workflow('suspending-races', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const signal = await Promise.race([
      step.waitForEvent('a').then((v) => 'a:' + v),
      step.waitForEvent('b').then((v) => 'b:' + v),
    ]);
    const retry = await Promise.race([
      step.do('flaky', { retries: { limit: 3, delay: 60_000, backoff: 'constant', jitter: false } }, () => {
        hit('sus-attempts');
        throw new Error('not yet');
      }),
      step.sleep('short', 200).then(() => 'slept'),
    ]);
    const until = await Promise.race([
      step.sleepUntil('until', new Date(ctx.now() + 200)).then(() => 'until'),
      step.waitForEvent('never').then(() => 'signal'),
    ]);
    return { signal, retry, until };
  });
});`,
  'depth-race': `
export default workflow('depth-race', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const first = await Promise.race([step.do('a', () => 'A').then((v) => v), step.do('b', () => 'B')]);
    const seen = await step.do('winner', () => first);
    await step.sleep('replay', 50);
    return { first, seen };
  });
});`,
  'reaction-order': `
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const once = (name, v) => () => (hit('ro-' + name), v);
const hops = async (n) => { for (let i = 0; i < n; i++) await null; };
export default workflow('reaction-order', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const seen = [];
    await Promise.all([
      step.do('a', once('a', 'A')).then(async (v) => (await hops(3), seen.push(await step.do('a2', once('a2', v + '2'))))),
      step.do('b', async () => once('b', 'B')()).then(async (v) => seen.push(await step.do('b2', once('b2', v + '2')))),
      step.do('c', once('c', 'C')).then((v) => step.do('c2', once('c2', v + '2'))).then((v) => seen.push(v)),
      step.do('d', async () => (await pause(5), once('d', 'D')())).then(async (v) => (await hops(1), seen.push(await step.do('d2', once('d2', v + '2'))))),
    ]);
    await step.sleep('replay', 50);
    return seen;
  });
});`,
  'code-retry': `
export default workflow('code-retry', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const n = await step.do('count', () => (hit('cd-calls'), read('cd-calls').length));
    if (read('cd-fixed') !== 'yes') throw new RangeError('bad arithmetic');
    return n;
  });
});`,
  'wait-retry': `
export default workflow('wait-retry', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('ask', () => 'asked');
    // The timeout is read when the wait opens (recorded with it), never on replay.
    const answer = await step.waitForEvent('approval', { timeout: Number(read('wr-timeout') || 100) });
    return step.do('apply', () => 'applied ' + answer);
  });
});`,
  'wrap-retry': `
export default workflow('wrap-retry', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      return await step.do('sync', { retries: { limit: 1 } }, () => {
        hit('wrap-calls');
        if (read('wrap-healthy') !== 'yes') throw new Error('remote 503');
        return 'synced';
      });
    } catch (e) {
      throw new Error('sync failed: ' + e.message);
    }
  });
});`,
  'odd-names': `
const names = ${JSON.stringify(ODD_NAMES)};
export default workflow('odd-names', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const out = {};
    for (const n of names) out[n] = await step.waitForEvent(n, { timeout: '30s' });
    return out;
  });
});`,
  'long-waits': `
export default workflow('long-waits', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    if (input.mode === 'sleep') await step.sleep('nap', '30d');
    if (input.mode === 'wait') await step.waitForEvent('reply', { timeout: '30d' });
    if (input.mode === 'retry') {
      await step.do('flaky', { retries: { limit: 2, delay: '30d', backoff: 'constant', jitter: false } }, () => {
        hit('lw-failures');
        throw new Error('not yet');
      });
    }
    const refused = [];
    for (const attempt of [
      () => step.sleep('too-long', '36526d'),
      () => step.do('too-long-timeout', { timeout: '40000d' }, () => 1),
      () => step.waitForEvent('too-long-wait', { timeout: 1e300 }),
    ]) {
      try {
        await attempt();
        refused.push('accepted');
      } catch (err) {
        refused.push(err.name + ': ' + err.message);
      }
    }
    return refused;
  });
});`,
  'on-signup': HOOK,
  'two-naps': `
export default workflow('two-naps', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => (await Promise.all([step.sleep('long', 1200), step.sleep('short', 100)]), 'done'));
});`,
};

/** The flows of the restart group's engine, restarted once for all of its cases. Their
 *  sleeps are 3 s (400 ms and 300 ms in-process) so that they are still pending when the
 *  group's slowest case has reached the restart. */
const RESTARTED: Record<string, string> = {
  'crash-fan-out': `
export default workflow('crash-fan-out', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => Promise.all(Array.from({ length: 20 }, (_, i) =>
    step.do('item-' + i, async ({ idempotencyKey }) => {
      hit('crash-keys', idempotencyKey + '\\n');
      const mine = () => read('crash-keys').split('\\n').filter((k) => k === idempotencyKey).length;
      // The odd items are cut off by the "crash" the first time.
      while (i % 2 === 1 && mine() === 1) await new Promise((r) => setTimeout(r, 20));
      return i;
    }))));
});`,
  'retry-restart': `
export default workflow('retry-restart', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('a', () => (hit('rr-a'), read('rr-a').length));
    let b;
    try {
      b = await step.do('b', { retries: { limit: 1 } }, () => {
        hit('rr-b');
        if (read('rr-healthy') !== 'yes') throw new Error('not yet');
        return 'B';
      });
    } catch (e) {
      await step.do('undo', () => (hit('rr-undo'), read('rr-undo').length));
      throw e;
    }
    await step.sleep('nap', 3000);
    const c = await step.do('c', () => (hit('rr-c'), read('rr-c').length));
    return { a, b, c };
  });
});`,
  'cleanup-restart': `
export default workflow('cleanup-restart', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await step.sleep('long', '1d');
    } finally {
      await step.do('undo-1', () => (hit('cr-cleanups'), read('cr-cleanups').length));
      await step.sleep('settle', 3000);
      await step.do('undo-2', () => (hit('cr-cleanups'), read('cr-cleanups').length));
    }
  });
});`,
  'two-sleeps': `
export default workflow('two-sleeps', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => Promise.race([step.sleep('short', 3000).then(() => 'short'), step.sleep('long', 60_000).then(() => 'long')]));
});`,
  'on-order': `
export default workflow('on-order', ${P}, (w) => {
  w.trigger(event('order.placed'));
  w.run(async ({ input, step }) => step.do('ship', () => 'shipped ' + input.orderId));
});`,
};

/** Collects the engine process's warnings named `name` while `fn` runs (and a turn after). */
async function warningsDuring(name: string, fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => {
    if (w.name === name) seen.push(w.message);
  };
  process.on('warning', listener);
  try {
    await fn();
    await sleep(20);
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

export function portedFileScenarios(kit: FileKit): void {
  const rigs = new Rigs(kit.backend);
  afterAll(() => rigs.cleanup());
  // Describes of their own: each group's engine lives exactly as long as its cases, and the
  // restart group never restarts an engine under a case of the first group.
  describe('more cases, one shared engine, at the same time', () => sharedCases(kit, rigs));
  describe('more cases across one restart of a shared engine', () => restartCases(kit, rigs));
}

function sharedCases({ concurrent }: FileKit, rigs: Rigs): void {
  let shared: Promise<FlowRig> | undefined;
  const rig = () => (shared ??= rigs.boot(Object.values(SHARED)));
  const status = async (r: FlowRig, runId: string) => (await r.engine.runs.get(runId)).status;

  concurrent('Promise.all of two step.do, then a sleep; Promise.allSettled keeps each outcome', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('all-settled', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 'A', b: 'B', settled: [1, 'nope'] });
  });

  concurrent('Promise.race of a wait and a sleep: the sleep wins when no signal comes', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('race-sleep', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ winner: 'slept', after: 'done' });
  });

  concurrent('a wait with a timeout raced against a longer sleep times out with TimeoutError', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('race-timeout', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('timed out');
  });

  concurrent('a void step gives undefined, on first execution and on replay', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('void-step', null)).runId, { timeout: '60s' });
    expect(view.output).toEqual({ first: true, again: true, nul: true });
  });

  concurrent('fan-out of 20 steps with random durations: every combinator, the same on replay', async () => {
    const r = await rig();
    const view = await r.engine.result((await r.engine.trigger('combinators', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({
      all: Array.from({ length: 20 }, (_, i) => `v${i}`),
      any: 'fast',
      settled: ['ok', 'bad', 'slept'],
      race: 'do',
    });
    expect(view.steps.slice(0, 20).map((s) => s.name)).toEqual(Array.from({ length: 20 }, (_, i) => `all-${i}`));
    // No body ran twice (each child after a sleep replays them from the journal).
    const bodies = [...Array.from({ length: 20 }, (_, i) => `all-${i}`), 'settle-ok'];
    expect(bodies.map((b) => r.hits(`comb-${b}`))).toEqual(bodies.map(() => 1));
  });

  concurrent('races of suspending kinds: wait against wait, retry against sleep, sleepUntil against wait', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('suspending-races', null);
    await until('run to wait', async () => (await status(r, runId)) === 'waiting');
    await r.engine.signal(runId, 'b', 'B');
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ signal: 'b:B', retry: 'slept', until: 'until' });
    expect(r.hits('sus-attempts')).toBe(1);
  });

  concurrent('a losing wait keeps its place: it takes the next signal of its name, a later wait the one after', async () => {
    const { engine } = await rig();
    const { runId } = await engine.trigger('losing-wait', null);
    await until('the sleep to win', async () => (await engine.runs.get(runId)).steps.some((s) => s.name === 't' && s.status === 'succeeded'));
    await until('the second wait', async () => (await engine.runs.get(runId)).steps.length === 3);
    await engine.signal(runId, 'go', 'one');
    await engine.signal(runId, 'go', 'two');
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view.output).toEqual({ first: 'slept', second: 'two' });
    expect(view.steps.find((s) => s.seq === 0)).toMatchObject({ name: 'go', status: 'succeeded', result: 'one' });
  });

  concurrent('two sleeps in Promise.all: after the short one, the run suspends again and wakes for the long one', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('two-naps', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('done');
  });

  concurrent('results of one commit reach the code in their recorded order, whatever the promise depth', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('depth-race', null)).runId, { timeout: '60s' });
    const out = view.output as { first: string; seen: string };
    expect(out.first).toBe(out.seen);
  });

  concurrent('reactions to sibling results call their next steps in the same order on replay, plain and async bodies mixed', async () => {
    const r = await rig();
    const view = await r.engine.result((await r.engine.trigger('reaction-order', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect([...(view.output as string[])].sort()).toEqual(['A2', 'B2', 'C2', 'D2']);
    // Every body ran once: the replay took each result from the journal.
    expect(['a', 'a2', 'b', 'b2', 'c', 'c2', 'd', 'd2'].map((n) => r.hits('ro-' + n))).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(view.steps.map((s) => s.name).slice(0, 4)).toEqual(['a', 'b', 'c', 'd']);
  });

  concurrent('a wait timing out beside a failing step: the rejection the code saw is the one replay gives', async () => {
    const { engine } = await rig();
    const view = await engine.result((await engine.trigger('timeout-order', null)).runId, { timeout: '60s' });
    const out = view.output as { first: string; seen: string };
    expect(out.first).toBe(out.seen);
  });

  concurrent('a step timeout longer than 24.8 days bounds the attempt without firing at once', async () => {
    const r = await rig();
    let view: RunView | undefined;
    const warnings = await warningsDuring('TimeoutOverflowWarning', async () => {
      const { runId } = await r.engine.trigger('long-timeout', null);
      view = await r.engine.result(runId, { timeout: '30d' });
    });
    expect(view?.error).toBeUndefined();
    expect(view?.status).toBe('succeeded');
    expect(view?.output).toBe('done');
    expect(r.hits('lt-attempts')).toBe(1);
    expect(warnings).toEqual([]);
  });

  concurrent('sleeps, wait deadlines and retry backoffs of 30 days are scheduled for their time; over 100 years is refused', async () => {
    const r = await rig();
    const expected = { sleep: 'sleeping', wait: 'waiting', retry: 'retrying' } as const;
    const runs: string[] = [];
    for (const mode of Object.keys(expected) as (keyof typeof expected)[]) {
      const before = Date.now();
      const { runId } = await r.engine.trigger('long-waits', { mode });
      runs.push(runId);
      await until(`run to be ${expected[mode]}`, async () => (await status(r, runId)) === expected[mode]);
      await sleep(300); // a timer that overflowed would have fired by now
      const view = await r.engine.runs.get(runId);
      expect([mode, view.status]).toEqual([mode, expected[mode]]);
      const wakeAt = Date.parse(view.wakeAt ?? '');
      expect(wakeAt - before, `${mode}: wakeAt ${view.wakeAt}`).toBeGreaterThanOrEqual(30 * DAY - 60_000);
      expect(wakeAt - before, `${mode}: wakeAt ${view.wakeAt}`).toBeLessThanOrEqual(30 * DAY + 60_000);
    }
    expect(r.hits('lw-failures')).toBe(1);
    for (const runId of runs) await r.engine.runs.cancel(runId);
    for (const runId of runs) expect((await r.engine.result(runId, { timeout: '60s' })).status).toBe('cancelled');
    const { runId } = await r.engine.trigger('long-waits', { mode: 'none' });
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    const refused = view.output as string[];
    expect(refused).toHaveLength(3);
    for (const line of refused) expect(line).toMatch(/^ValidationError: .*longer than 100 years/);
    await expect(r.engine.result(runId, { timeout: '40000d' })).rejects.toThrow(/result timeout: '40000d' is longer than 100 years/);
  });

  concurrent('signal names with any characters reach their wait; a finished run refuses signals', async () => {
    const { engine } = await rig();
    const { runId } = await engine.trigger('odd-names', null);
    for (const n of [...ODD_NAMES].reverse()) await engine.signal(runId, n, `for ${n}`);
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(Object.fromEntries(ODD_NAMES.map((n) => [n, `for ${n}`])));
    const refused = await engine.signal(runId, 'a/b', 'too late').then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(RunStateError);
    expect((refused as Error).message).toBe(`run ${runId} already finished (succeeded); signal 'a/b' not delivered`);
  });

  concurrent('retry of a run whose code wrapped the step error succeeds once the cause is fixed', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('wrap-retry', null);
    const failed = await r.engine.result(runId, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ name: 'Error', message: 'sync failed: remote 503' });
    r.put('wrap-healthy', 'yes');
    const retried = await r.engine.runs.retry(runId);
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('synced');
    expect(r.hits('wrap-calls')).toBe(2);
    expect(retried.discarded.map((d) => d.name)).toEqual(['sync']);
  });

  concurrent('every retry cycle hands workflow code fresh copies of input and recorded results', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('fresh-retry', { seen: 0 });
    expect((await r.engine.result(runId, { timeout: '60s' })).status).toBe('failed');
    await r.engine.runs.retry(runId); // fails again: a second cycle of the same code
    expect((await r.engine.result(runId, { timeout: '60s' })).status).toBe('failed');
    r.put('fr-healthy', 'yes');
    await r.engine.runs.retry(runId);
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ total: 110, seen: 1 });
    expect(view.input).toEqual({ seen: 0 });
    expect(view.steps.find((s) => s.name === 'load-cart')?.result).toEqual({ total: 100 });
  });

  concurrent('retry of a run that failed on a timed-out wait opens the wait again', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('wait-retry', null);
    const failed = await r.engine.result(runId, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    expect(failed.error?.name).toBe('TimeoutError');
    r.put('wr-timeout', '120000');
    const retried = await r.engine.runs.retry(runId);
    await until('run to suspend again', async () => !['pending', 'running'].includes(await status(r, runId)));
    expect(await status(r, runId)).toBe('waiting');
    await r.engine.signal(runId, 'approval', 'yes');
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('applied yes');
    expect(retried).toEqual({
      from: { seq: 1, name: 'approval' },
      discarded: [{ seq: 1, name: 'approval', kind: 'wait', status: 'timedout' }],
    });
  });

  concurrent('a signal taken by a discarded wait stays consumed: the wait reached again takes the next one', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('signal-retry', null);
    await r.engine.signal(runId, 'go', 1);
    expect((await r.engine.result(runId, { timeout: '60s' })).status).toBe('failed');
    r.put('sr-healthy', 'yes');
    const retried = await r.engine.runs.retry(runId, { from: 'go' });
    expect(retried.discarded.map((d) => [d.name, d.status])).toEqual([['go', 'succeeded'], ['use', 'failed']]);
    await until('run to suspend again', async () => !['pending', 'running'].includes(await status(r, runId)));
    expect(await status(r, runId)).toBe('waiting');
    await r.engine.signal(runId, 'go', 2);
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe(2);
  });

  concurrent('retry of a run that failed in code outside any step replays it and discards nothing', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('code-retry', null);
    expect((await r.engine.result(runId, { timeout: '60s' })).status).toBe('failed');
    r.put('cd-fixed', 'yes');
    const retried = await r.engine.runs.retry(runId);
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe(1);
    expect(r.hits('cd-calls')).toBe(1);
    expect(retried).toEqual({ discarded: [] });
  });

  concurrent('a second cancel ends a run at once, even while its cleanup runs', async () => {
    const r = await rig();
    const { runId } = await r.engine.trigger('stubborn', null);
    await until('run to sleep', async () => (await status(r, runId)) === 'sleeping');
    await r.engine.runs.cancel(runId);
    await until('cleanup to start', async () => (await r.engine.runs.get(runId)).steps.some((s) => s.name === 'long' && s.status === 'failed'));
    await sleep(200);
    expect(await status(r, runId)).toBe('running');
    await r.engine.runs.cancel(runId);
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
  });

  concurrent('webhook: a valid delivery gets 202 with the run id; an Idempotency-Key redelivery returns the same run', async () => {
    const { engine } = await rig();
    const url = await engine.webhookUrl('on-signup');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/on-signup\/[A-Za-z0-9_-]{43}$/);
    const res = await post(url, JSON.stringify({ email: 'a@example.com' }));
    expect(res.status).toBe(202);
    const { runId, created } = (await res.json()) as { runId: string; created: boolean };
    expect(created).toBe(true);
    expect((await engine.result(runId, { timeout: '60s' })).output).toBe('welcome a@example.com (free)');

    const headers = { 'content-type': 'application/json', 'idempotency-key': 'delivery-7' };
    const a = (await (await post(url, JSON.stringify({ email: 'b@example.com' }), headers)).json()) as { runId: string; created: boolean };
    const b = await post(url, JSON.stringify({ email: 'b@example.com' }), headers);
    expect(b.status).toBe(202);
    expect(await b.json()).toEqual({ runId: a.runId, created: false });
    expect(await engine.runs.list({ workflow: 'on-signup' })).toHaveLength(2);
    await engine.result(a.runId, { timeout: '60s' });
  });

  concurrent('webhook: wrong or missing secret 404, oversized body 413, invalid body 400, and none creates a run', async () => {
    const { engine } = await rigs.boot(HOOK); // its own engine: it asserts that no run exists
    const url = await engine.webhookUrl('on-signup');
    const base = url.slice(0, url.lastIndexOf('/'));
    const body = JSON.stringify({ email: 'a@example.com' });
    expect((await post(`${base}/wrong-secret`, body)).status).toBe(404);
    expect((await post(`${base}/${'A'.repeat(43)}`, body)).status).toBe(404);
    expect((await post(base, body)).status).toBe(404);
    expect((await post(url.replace('/on-signup/', '/no-such-workflow/'), body)).status).toBe(404);

    const big = JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(1024 * 1024 + 10) });
    expect((await post(url, big)).status).toBe(413);

    const invalid = await post(url, JSON.stringify({ email: 'not-an-email' }));
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toMatch(/email/);
    const broken = await post(url, '{"email": ');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: string }).error).toMatch(/not valid JSON/);
    expect((await post(url, 'hello', { 'content-type': 'text/plain' })).status).toBe(415);

    expect(await engine.runs.list({ workflow: 'on-signup' })).toEqual([]);
  });

  concurrent('cleanup that outlives the grace bound (config cancelGrace) ends the run cancelled', async () => {
    const r = await rigs.boot(`
export default workflow('slow-cleanup', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    try {
      await step.sleep('long', '1d');
    } finally {
      await step.sleep('slow-undo', '1h');
      await step.do('never-reached', () => (hit('after'), 1));
    }
  });
});`, { cancelGrace: '1s' });
    const { runId } = await r.engine.trigger('slow-cleanup', null);
    await until('run to sleep', async () => (await status(r, runId)) === 'sleeping');
    await r.engine.runs.cancel(runId);
    const view = await r.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
    expect(view.steps.map((s) => s.name)).toEqual(['long', 'slow-undo']);
    expect(r.hits('after')).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-files-grace-'));
    try {
      await expect(createEngine({ backend: 'sqlite', dataDir: dir, workflowFiles: [r.file], cancelGrace: 'soon' })).rejects.toThrow(/cancelGrace/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  concurrent('an event with no subscriber is kept and visible, not dropped', async () => {
    // Its own engine: the case asserts on every event the engine has.
    const { engine } = await rigs.boot(`
export default workflow('listener', ${P}, (w) => {
  w.trigger(event('known'));
  w.run(async () => 'ok');
});`);
    const r = await engine.emit('nobody.listens', { n: 1 }, { id: 'lonely-1' });
    expect(r).toEqual({ runIds: [], duplicate: false });
    const unmatched = await engine.events.list({ unmatched: true });
    expect(unmatched.map((e) => [e.id, e.name, e.payload])).toEqual([['lonely-1', 'nobody.listens', { n: 1 }]]);
    const known = await engine.emit('known', null, { id: 'k-1' });
    expect((await engine.events.list()).map((e) => e.id).sort()).toEqual(['k-1', 'lonely-1']);
    for (const id of known.runIds) await engine.result(id, { timeout: '60s' });
  });
}

/** The restart group's cases run at the same time and share ONE restart of their engine
 *  (a restate-server restart costs seconds): each prepares its run, then `restart()` waits
 *  until every case of the group that started has arrived (or left) and restarts once. */
class RestartGroup {
  private shared: Promise<FlowRig> | undefined;
  private started = 0;
  private arrived = 0;
  private restarted: Promise<Engine> | undefined;
  private go!: () => void;
  private readonly all = new Promise<void>((r) => (this.go = r));

  constructor(private readonly rigs: Rigs) {}

  rig(): Promise<FlowRig> {
    return (this.shared ??= this.rigs.boot(Object.values(RESTARTED)));
  }

  /** Runs one case of the group (it counts as started until it arrives or ends). */
  async run(fn: () => Promise<void>): Promise<void> {
    this.started++;
    try {
      await fn();
    } finally {
      // A case that ends before the restart (it failed early) no longer holds the group.
      if (!this.restarted) this.started--, this.check();
    }
  }

  /** The group's engine after the one restart. */
  async restart(): Promise<Engine> {
    // A case that starts after the restart (more cases than vitest runs at once, 5) would
    // get no restart at all: refuse rather than pass without testing anything.
    if (this.restarted) throw new Error('restart group: this case started after the group restarted (keep the group at 5 cases)');
    this.arrived++;
    this.check();
    await this.all;
    return (this.restarted ??= this.rig().then((r) => r.restart()));
  }

  private check(): void {
    // Cases of a concurrent group start together: wait a moment for late starters.
    if (this.arrived > 0 && this.arrived >= this.started) setTimeout(() => this.arrived >= this.started && this.go(), 200);
  }
}

function restartCases({ concurrent }: FileKit, rigs: Rigs): void {
  const restarted = new RestartGroup(rigs);
  const status = async (r: FlowRig, runId: string) => (await r.engine.runs.get(runId)).status;
  const test = (name: string, fn: () => Promise<void>) => concurrent(name, () => restarted.run(fn), 120_000);

  test('two sleeps in parallel suspend durably and wake on the due one, across a restart', async () => {
    const r = await restarted.rig();
    const { runId } = await r.engine.trigger('two-sleeps', null);
    await until('run to sleep', async () => (await status(r, runId)) === 'sleeping');
    const again = await restarted.restart();
    const view = await again.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('short');
  });

  test('a retried run that sleeps survives a restart: discarded steps stay discarded, no body runs twice', async () => {
    const r = await restarted.rig();
    const { runId } = await r.engine.trigger('retry-restart', null);
    expect((await r.engine.result(runId, { timeout: '60s' })).status).toBe('failed');
    r.put('rr-healthy', 'yes');
    await r.engine.runs.retry(runId);
    await until('run to sleep', async () => (await status(r, runId)) === 'sleeping');
    const second = await restarted.restart();
    const view = await second.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 1, b: 'B', c: 1 });
    expect(['rr-a', 'rr-b', 'rr-undo', 'rr-c'].map((n) => r.hits(n))).toEqual([1, 2, 1, 1]);
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([['a', 'succeeded'], ['b', 'succeeded'], ['nap', 'succeeded'], ['c', 'succeeded']]);
  });

  test('cleanup survives a restart: the cancel is thrown at the same step on replay and cleanup goes on', async () => {
    const r = await restarted.rig();
    const { runId } = await r.engine.trigger('cleanup-restart', null);
    await until('run to sleep', async () => (await status(r, runId)) === 'sleeping');
    await r.engine.runs.cancel(runId);
    await until('first cleanup step', async () => (await r.engine.runs.get(runId)).steps.some((s) => s.name === 'undo-1' && s.status === 'succeeded'));
    const again = await restarted.restart();
    const view = await again.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([
      ['long', 'failed'],
      ['undo-1', 'succeeded'],
      ['settle', 'succeeded'],
      ['undo-2', 'succeeded'],
    ]);
    expect(r.hits('cr-cleanups')).toBe(2);
  });

  test('a crash in a fan-out of 20 re-runs only the unfinished bodies, each with its own key', async () => {
    const r = await restarted.rig();
    const { runId } = await r.engine.trigger('crash-fan-out', null);
    await until('the even items to be recorded', async () => (await r.engine.runs.get(runId)).steps.filter((s) => s.status === 'succeeded').length === 10);
    const again = await restarted.restart();
    const view = await again.result(runId, { timeout: '60s' });
    expect(view.error).toBeUndefined();
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const keys = r.text('crash-keys').split('\n').filter(Boolean);
    const count = (i: number) => keys.filter((k) => k === `${runId}/item-${i}`).length;
    for (let i = 0; i < 20; i++) expect(count(i), `item-${i}`).toBe(i % 2 === 1 ? 2 : 1);
  });

  test('the same event id twice starts one run, also across a restart', async () => {
    const r = await restarted.rig();
    const first = await r.engine.emit('order.placed', { orderId: 'o1' }, { id: 'order-o1' });
    await r.engine.result(first.runIds[0]!, { timeout: '60s' });
    const again = await restarted.restart();
    const second = await again.emit('order.placed', { orderId: 'o1' }, { id: 'order-o1' });
    expect(second).toEqual({ runIds: first.runIds, duplicate: true });
    expect(await again.runs.list({ workflow: 'on-order' })).toHaveLength(1);
  });

  // Its own engine and restart: the group above is already at vitest's 5 cases at once.
  concurrent('webhook: form bodies are accepted; the path alias works; the URL is the same after a restart', async () => {
    const r = await rigs.boot(HOOK);
    const url = await r.engine.webhookUrl('on-signup');
    const form = await post(url.replace('/on-signup/', '/signup/'), 'email=f%40example.com&plan=pro', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(202);
    const { runId } = (await form.json()) as { runId: string };
    expect((await r.engine.result(runId, { timeout: '60s' })).output).toBe('welcome f@example.com (pro)');
    const again = await r.restart();
    expect(await again.webhookUrl('on-signup')).toBe(url);
    const res = await post(url, JSON.stringify({ email: 'r@example.com' }));
    expect(res.status).toBe(202);
    await again.result(((await res.json()) as { runId: string }).runId, { timeout: '60s' });
  });
}
