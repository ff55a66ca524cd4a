// Core conformance cases THROUGH THE RUNNER: the suite's cases of the same names
// (test/conformance/suite.ts), with the workflow as a file executed in Deno children. Where
// the in-process case observes a test variable, the file uses `hit` / `gate` / `read` of its
// declared ./out directory (harness.ts); the assertions are the suite's.
import { expect } from 'vitest';
import { detectConfinement } from '../../../src/adapters/deno/confine.ts';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

const P = `{ permissions: ${OUT_PERMISSIONS} }`;

export function coreFileScenarios({ test, boot }: FileKit): void {
  test('replay returns recorded results without re-running step bodies', async () => {
    const rig = await boot(`
export default workflow('replay', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('a', () => (hit('a'), 1));
    await step.sleep('nap', 150);
    const b = await step.do('b', () => (hit('b'), 1));
    return { a, b };
  });
});`);
    const { runId } = await rig.engine.trigger('replay', {});
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 1, b: 1 });
    expect([rig.hits('a'), rig.hits('b')]).toEqual([1, 1]);
    expect(view.steps.filter((s) => s.kind === 'do').map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['a', 'succeeded', 1],
      ['b', 'succeeded', 1],
    ]);
  });

  test('an interrupted step re-runs after restart with the same idempotency key', async () => {
    const rig = await boot(`
export default workflow('interrupt', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('charge', async ({ idempotencyKey, attempt }) => {
    hit('keys', idempotencyKey + '\\n');
    if (read('keys').split('\\n').filter(Boolean).length === 1) await gate('never'); // cut off by the "crash"
    return { charged: true, attempt };
  }));
});`);
    const { runId } = await rig.engine.trigger('interrupt', {});
    await until('first attempt to start', () => rig.text('keys').length > 0);
    const second = await rig.restart();
    const view = await second.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    const keys = rig.text('keys').split('\n').filter(Boolean);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys)).toEqual(new Set([`${runId}/charge`]));
  });

  test('retries with backoff, then fails with the last error', async () => {
    const rig = await boot(`
export default workflow('flaky', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('call', { retries: { limit: 3, backoff: 'constant', delay: 60, jitter: false } }, ({ attempt, idempotencyKey }) => {
      hit('seen', JSON.stringify({ attempt, key: idempotencyKey, at: Date.now() }) + '\\n');
      throw new Error('boom ' + attempt);
    });
  });
});`);
    const { runId } = await rig.engine.trigger('flaky', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({ message: 'boom 3' });
    const seen = rig.text('seen').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { attempt: number; key: string; at: number });
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(new Set(seen.map((s) => s.key))).toEqual(new Set([`${runId}/call`]));
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(55);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(55);
    expect(view.steps.find((s) => s.name === 'call')).toMatchObject({ status: 'failed', attempts: 3, error: { message: 'boom 3' } });
  });

  test('a TerminalError is not retried and is catchable by workflow code', async () => {
    const rig = await boot(`
export default workflow('terminal', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    try {
      await step.do('charge', () => { hit('attempts'); throw new TerminalError('card declined'); });
    } catch (err) {
      if (input.catchIt && err instanceof TerminalError) return { recovered: err.message };
      throw err;
    }
  });
});`);
    const failed = await rig.engine.result((await rig.engine.trigger('terminal', { catchIt: false })).runId, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ name: 'TerminalError', message: 'card declined' });
    expect(rig.hits('attempts')).toBe(1);
    const caught = await rig.engine.result((await rig.engine.trigger('terminal', { catchIt: true })).runId, { timeout: '60s' });
    expect(caught.status).toBe('succeeded');
    expect(caught.output).toEqual({ recovered: 'card declined' });
    expect(rig.hits('attempts')).toBe(2);
  });

  test('a sleep survives an engine restart and wakes no earlier than asked', async () => {
    const rig = await boot(`
export default workflow('sleeper', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const before = await step.do('before', () => Date.now());
    await step.sleep('nap', 600);
    const after = await step.do('after', () => Date.now());
    return { before, after };
  });
});`);
    const { runId } = await rig.engine.trigger('sleeper', null);
    await until('run to sleep', async () => (await rig.engine.runs.get(runId)).status === 'sleeping');
    const second = await rig.restart();
    const view = await second.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    const out = view.output as { before: number; after: number };
    expect(out.after - out.before).toBeGreaterThanOrEqual(590);
  });

  test('waitForEvent is resolved by a signal; signals sent early are kept, FIFO, one per wait', async () => {
    const rig = await boot(`
export default workflow('approval', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.sleep('let-signals-arrive', 200);
    const first = await step.waitForEvent('reply');
    const second = await step.waitForEvent('reply');
    const third = await step.waitForEvent('reply', { timeout: '20s' });
    return [first, second, third];
  });
});`);
    const { runId } = await rig.engine.trigger('approval', null);
    await rig.engine.signal(runId, 'reply', { n: 1 });
    await rig.engine.signal(runId, 'reply', { n: 2 });
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    await rig.engine.signal(runId, 'reply', { n: 3 });
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  test('waitForEvent times out with TimeoutError; a late signal goes to the next wait', async () => {
    const rig = await boot(`
export default workflow('timeout', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    let first;
    try {
      first = await step.waitForEvent('reply', { timeout: 150 });
    } catch (err) {
      first = err instanceof TimeoutError ? 'timed out' : 'other: ' + err.name;
    }
    const second = await step.waitForEvent('reply');
    return { first, second };
  });
});`);
    const { runId } = await rig.engine.trigger('timeout', null);
    await until('first wait to time out', async () => (await rig.engine.runs.get(runId)).steps.some((s) => s.status === 'timedout'));
    await rig.engine.signal(runId, 'reply', 'late');
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.output).toEqual({ first: 'timed out', second: 'late' });
  });

  test('ctx.now() and ctx.random() are stable across replay', async () => {
    const rig = await boot(`
export default workflow('journaled', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const t = ctx.now();
    const r = ctx.random();
    const seen = await step.do('capture', () => ({ t, r }));
    await step.sleep('nap', 100); // a new child replays everything above
    return { t, r, seen, runId: ctx.runId, workflow: ctx.workflow };
  });
});`);
    const { runId } = await rig.engine.trigger('journaled', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    const out = view.output as { t: number; r: number; seen: { t: number; r: number }; runId: string; workflow: string };
    expect(out.seen).toEqual({ t: out.t, r: out.r });
    expect(out.r).toBeGreaterThanOrEqual(0);
    expect(out.r).toBeLessThan(1);
    expect(Math.abs(out.t - Date.now())).toBeLessThan(60_000);
    expect(out.runId).toBe(runId);
    expect(out.workflow).toBe('journaled');
  });

  test('non-determinism is detected and names run, position, expected and recorded step', async () => {
    // A run executes its snapshot, so editing the file cannot make it diverge; code that
    // branches on outside state (here a file it reads) can.
    const rig = await boot(`
export default workflow('shifty', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do(read('mode') || 'a', () => 1);
    await step.sleep('nap', 300);
    return 'done';
  });
});`);
    const { runId } = await rig.engine.trigger('shifty', null);
    await until('run to sleep', async () => (await rig.engine.runs.get(runId)).status === 'sleeping');
    rig.put('mode', 'b');
    const second = await rig.restart();
    const view = await second.result(runId, { timeout: '60s' });
    expect(view.status).toBe('failed');
    expect(view.error?.name).toBe('NonDeterminismError');
    expect(view.error?.message).toContain(runId);
    expect(view.error?.message).toContain("'b'");
    expect(view.error?.message).toContain("'a'");
    expect(view.error?.message).toMatch(/position 0/);
  });

  test('the same caller run id starts one run', async () => {
    const rig = await boot(`
export default workflow('once', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('count', () => (hit('calls'), read('calls').length)));
});`);
    const a = await rig.engine.trigger('once', { x: 1 }, { runId: 'order-42' });
    const b = await rig.engine.trigger('once', { x: 2 }, { runId: 'order-42' });
    expect(a).toEqual({ runId: 'order-42', created: true });
    expect(b).toEqual({ runId: 'order-42', created: false });
    const view = await rig.engine.result('order-42', { timeout: '60s' });
    expect(view.input).toEqual({ x: 1 });
    expect(rig.hits('calls')).toBe(1);
  });

  test('the same event id starts one run per subscriber, once', async () => {
    const rig = await boot(`
export default workflow('on-signup', ${P}, (w) => {
  w.trigger(event('user.signed_up'));
  w.run(async ({ input, step }) => step.do('greet', () => 'hi ' + input.userId));
});`);
    const first = await rig.engine.emit('user.signed_up', { userId: 'u1' }, { id: 'evt-1' });
    const again = await rig.engine.emit('user.signed_up', { userId: 'u1' }, { id: 'evt-1' });
    expect(first.duplicate).toBe(false);
    expect(first.runIds).toHaveLength(1);
    expect(again).toEqual({ runIds: first.runIds, duplicate: true });
    const view = await rig.engine.result(first.runIds[0]!, { timeout: '60s' });
    expect(view.output).toBe('hi u1');
    expect((await rig.engine.runs.list({ workflow: 'on-signup' })).length).toBe(1);
  });

  test('cancel stops a sleeping run at once; cancel of a finished or unknown run rejects', async () => {
    const rig = await boot(`
export default workflow('cancellable', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.sleep('long', '1h');
    return 'woke';
  });
});`);
    const { runId } = await rig.engine.trigger('cancellable', null);
    await until('run to sleep', async () => (await rig.engine.runs.get(runId)).status === 'sleeping');
    await rig.engine.runs.cancel(runId);
    const view = await rig.engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('cancelled');
    await expect(rig.engine.runs.cancel(runId)).rejects.toThrow(runId);
    expect((await rig.engine.runs.get(runId)).status).toBe('cancelled');
    await expect(rig.engine.runs.cancel('no-such-run')).rejects.toThrow(/no-such-run/);
  });

  // Files only (issue 36): a child that crashes in a step (exit 70, as an unstable API does)
  // fails the attempt; the run waits for its next one. A FIRST cancel ends it there, never
  // after the next attempt (an hour away here: the result's 60 s would not see it).
  test('cancel stops a run retrying after its child crashed at once, before its next attempt', async () => {
    const rig = await boot(`
export default workflow('crashy', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('unstable', { retries: { limit: 100, delay: '1h', backoff: 'constant' } }, () => { hit('tries'); Deno.exit(70); }));
});`);
    const { runId } = await rig.engine.trigger('crashy', null);
    await until('the crashed attempt to wait for its retry', async () => (await rig.engine.runs.get(runId)).steps[0]?.status === 'retrying', 60_000);
    const waiting = await rig.engine.runs.get(runId);
    expect(waiting.steps[0]).toMatchObject({ name: 'unstable', status: 'retrying', attempts: 1 });
    expect(waiting.steps[0]!.error?.message).toMatch(/crashed \(exit 70\)/);
    await rig.engine.runs.cancel(runId);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
    expect(rig.hits('tries')).toBe(1);
  });

  // Files only (issue 36): a child that dies at every start before its outcome. Under
  // bubblewrap, `Deno.exit(137)` is bwrap's exit status of a SIGKILL: the engine takes it
  // for a kill from outside and resumes the run in a new child, again and again; a FIRST
  // cancel, which no child lives to receive, must end it on the next try. Without bwrap the
  // exit is seen as what it is, a crash while loading, and the run fails at once.
  test('cancel ends at once a run whose every child dies at start (under bwrap, looking killed)', async () => {
    const rig = await boot(`
export default workflow('doomed', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('never', () => 1));
});
if (Deno.args.length > 0) { hit('starts'); Deno.exit(137); }`);
    const { runId } = await rig.engine.trigger('doomed', null);
    if (detectConfinement().kind !== 'bwrap') {
      const view = await rig.engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('failed');
      expect(view.error?.message).toMatch(/crashed \(exit 137\).*while loading the workflow file/);
      return;
    }
    await until('two children to die at start', () => rig.hits('starts') >= 2, 60_000);
    expect((await rig.engine.runs.get(runId)).status).toBe('running');
    const before = rig.hits('starts');
    await rig.engine.runs.cancel(runId);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
    // No code ran, so no child is started for the cancel (one may have been starting as it was asked).
    expect(rig.hits('starts') - before).toBeLessThanOrEqual(1);
  });

  // Files only (issue 36): as above, but every child connects and replays its first step
  // before it dies, looking killed: workflow code ran, so the cancel is offered to the next
  // child (its cleanup) and, on both backends, ends the run once CANCEL_TRIES (2) children
  // died with the cancel asked (docs/semantics.md, Cancel). Never the endless retry.
  test('cancel ends a run whose every child dies after connecting, within two more children', async () => {
    const rig = await boot(`
export default workflow('doomed-late', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('first', () => (hit('first'), 1));
    hit('starts');
    Deno.exit(137);
  });
});`);
    const { runId } = await rig.engine.trigger('doomed-late', null);
    if (detectConfinement().kind !== 'bwrap') {
      const view = await rig.engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('failed');
      expect(view.error?.message).toMatch(/crashed \(exit 137\).*outside any step/);
      return;
    }
    await until('two children to die after their first step', () => rig.hits('starts') >= 2, 60_000);
    expect((await rig.engine.runs.get(runId)).status).toBe('running');
    const before = rig.hits('starts');
    await rig.engine.runs.cancel(runId);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('cancelled');
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([['first', 'succeeded']]);
    expect(rig.hits('first')).toBe(1);
    // The cancel was offered to at least one more child (its cleanup's chance) and ended the
    // run when CANCEL_TRIES children had died with it asked (the first perhaps one that was
    // starting as it was asked).
    expect(rig.hits('starts') - before).toBeGreaterThanOrEqual(1);
    expect(rig.hits('starts') - before).toBeLessThanOrEqual(2);
  });

  test('cancel of a running step takes effect at the next step boundary', async () => {
    const rig = await boot(`
export default workflow('cancel-running', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('slow', async () => { hit('slow'); await gate('go'); return 1; });
    await step.do('after', () => (hit('after'), 1));
  });
});`);
    const { runId } = await rig.engine.trigger('cancel-running', null);
    await until('step to start', () => rig.hits('slow') > 0);
    await rig.engine.runs.cancel(runId);
    rig.open('go');
    const view = await rig.engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('cancelled');
    expect(rig.hits('after')).toBe(0);
  });

  test('retry of a failed run resumes it with recorded results and the same key', async () => {
    const rig = await boot(`
export default workflow('fixable', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('first', () => (hit('first'), read('first').length));
    const b = await step.do('second', { retries: { limit: 2, delay: 10, backoff: 'constant', jitter: false } }, ({ idempotencyKey }) => {
      hit('keys', idempotencyKey + '\\n');
      if (read('healthy') !== 'yes') throw new Error('downstream unavailable');
      return 'ok';
    });
    return { a, b };
  });
});`);
    const { runId } = await rig.engine.trigger('fixable', null);
    const failed = await rig.engine.result(runId, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    rig.put('healthy', 'yes');
    await rig.engine.runs.retry(runId);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ a: 1, b: 'ok' });
    expect(rig.hits('first')).toBe(1);
    expect(new Set(rig.text('keys').split('\n').filter(Boolean))).toEqual(new Set([`${runId}/second`]));
    await expect(rig.engine.runs.retry(runId)).rejects.toThrow(/succeeded/);
  });

  test('explain says what a run waits for and which attempt of which step failed', async () => {
    const rig = await boot(`
export default workflow('explained', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    if (input.fail) {
      await step.do('send', { retries: { limit: 2, delay: 10, jitter: false } }, () => { throw new Error('smtp 451'); });
    }
    await step.sleep('cool-off', '1h');
  });
});`);
    const sleeping = (await rig.engine.trigger('explained', { fail: false })).runId;
    await until('run to sleep', async () => (await rig.engine.runs.get(sleeping)).status === 'sleeping');
    expect((await rig.engine.runs.explain(sleeping)).summary).toMatch(/sleeping in step 'cool-off' until \d{4}-/);
    const failing = (await rig.engine.trigger('explained', { fail: true })).runId;
    await rig.engine.result(failing, { timeout: '60s' });
    expect((await rig.engine.runs.explain(failing)).summary).toMatch(/step 'send' failed on attempt 2 with Error: smtp 451/);
  });

  test('step results keep their shape on first execution; a result that cannot be stored fails its step once, uncaught the run', async () => {
    const rig = await boot(`
class Owner {}
export default workflow('json', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const d = await step.do('date', () => ({ at: new Date(0), gone: undefined, n: 1 }));
    if (input.bad) await step.do('bad', { retries: { limit: 3, delay: 10 } }, () => (hit('bad'), { owner: new Owner() }));
    return { d, isDate: d.at instanceof Date, hasGone: Object.hasOwn(d, 'gone') };
  });
});`);
    const ok = await rig.engine.result((await rig.engine.trigger('json', { bad: false })).runId, { timeout: '60s' });
    expect(ok.output).toEqual({ d: { at: new Date(0), gone: undefined, n: 1 }, isDate: true, hasGone: true });
    const bad = await rig.engine.result((await rig.engine.trigger('json', { bad: true })).runId, { timeout: '60s' });
    expect(bad.status).toBe('failed');
    expect(bad.error).toEqual({ name: 'SerializationError', message: "result of step 'bad' at .owner: class instance Owner is not storable; return plain data" });
    expect(rig.hits('bad')).toBe(1);
  });

  test('repeated step names get distinct keys; nested steps and empty names are rejected', async () => {
    const rig = await boot(`
export default workflow('names', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < 3; i++) await step.do('poll', ({ idempotencyKey }) => hit('keys', idempotencyKey + '\\n'));
    let nested = 'not rejected';
    await step.do('outer', async () => {
      try { await step.do('inner', () => 1); } catch (err) { nested = err.message; }
    });
    let empty = 'not rejected';
    try { await step.do('', () => 1); } catch (err) { empty = err.message; }
    return { nested, empty };
  });
});`);
    const { runId } = await rig.engine.trigger('names', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(rig.text('keys').split('\n').filter(Boolean)).toEqual([`${runId}/poll`, `${runId}/poll#2`, `${runId}/poll#3`]);
    const out = view.output as { nested: string; empty: string };
    expect(out.nested).toMatch(/inside a step\.do body/);
    expect(out.empty).toMatch(/non-empty/);
  });

  test('a step timeout bounds each attempt and counts as a failed attempt', async () => {
    const rig = await boot(`
export default workflow('slowpoke', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    await step.do('slow', { timeout: 80, retries: { limit: 2, delay: 10, jitter: false } }, () => new Promise((r) => setTimeout(() => r('late'), 2000)));
  });
});`);
    const view = await rig.engine.result((await rig.engine.trigger('slowpoke', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('failed');
    expect(view.error?.name).toBe('TimeoutError');
    expect(view.steps.find((s) => s.name === 'slow')).toMatchObject({ status: 'failed', attempts: 2 });
  });

  test('non-Error throws are retried and surface as Error with their text; code errors outside steps fail the run', async () => {
    const rig = await boot(`
export default workflow('odd-throws', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const got = await step.do('stringy', { retries: { limit: 3, delay: 10, jitter: false } }, () => {
      hit('n');
      const n = read('n').length;
      if (n % 3 !== 0) throw 'plain string failure';
      return 3;
    });
    if (input.explode) throw new RangeError('bad arithmetic');
    return got;
  });
});`);
    const ok = await rig.engine.result((await rig.engine.trigger('odd-throws', { explode: false })).runId, { timeout: '60s' });
    expect(ok.output).toBe(3);
    expect(ok.steps.find((s) => s.name === 'stringy')?.attempts).toBe(3);
    const bad = await rig.engine.result((await rig.engine.trigger('odd-throws', { explode: true })).runId, { timeout: '60s' });
    expect(bad.status).toBe('failed');
    expect(bad.error).toEqual({ name: 'RangeError', message: 'bad arithmetic' });
  });

}
