// Conformance scenarios for the value codec (issue 37, docs/values.md), called from
// runConformance() and, with the same workflow source, from the suite through the runner
// (files/values.ts): every kind the codec keeps comes back of its class through a step, a
// run's input, a signal, an event, a restart (the step replays from the journal) and a
// retry; and what cannot be stored is refused where it happens, naming the step and the path,
// catchable by the code, never retried.
import { expect } from 'vitest';
import { event, manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

/** Source (plain JS, also written into workflow files) of `rich()`, one value of every kind
 *  the codec keeps, and `kinds(v)`, what the code sees of it as plain data (checked in the
 *  workflow code, where the value arrives). */
export const VALUES_SRC = `
function rich() {
  const shared = { n: 1 };
  const err = new RangeError('out of range', { cause: new Error('root') });
  err.code = 'E_RANGE';
  const cyc = { name: 'loop' };
  cyc.self = cyc;
  return {
    u: undefined, arr: [1, undefined, 3], d: new Date(0), m: new Map([['a', 1], ['b', new Set([2])]]), s: new Set([1, 2]),
    big: 10n, nan: NaN, inf: -Infinity, nz: -0, bytes: new Uint8Array([1, 2, 255]), buf: new Uint8Array([7, 8]).buffer,
    url: new URL('https://example.com/a?b=1'), re: /x+/gi, err, x: shared, y: shared,
    deep: { a: [{ b: new Map([['k', new Set([new Date(1)])]]) }] }, cyc,
  };
}
function kinds(v) {
  return [
    'u' in v && v.u === undefined, v.arr.length === 3 && 1 in v.arr && v.arr[1] === undefined, v.d instanceof Date && v.d.getTime() === 0,
    v.m instanceof Map && v.m.get('b') instanceof Set, v.s instanceof Set && v.s.has(2), v.big === 10n, Number.isNaN(v.nan),
    v.inf === -Infinity, Object.is(v.nz, -0), v.bytes instanceof Uint8Array && v.bytes[2] === 255, v.buf instanceof ArrayBuffer && v.buf.byteLength === 2,
    v.url instanceof URL && v.url.searchParams.get('b') === '1', v.re instanceof RegExp && v.re.flags === 'gi',
    v.err instanceof RangeError && v.err.message === 'out of range' && v.err.code === 'E_RANGE' && v.err.cause instanceof Error,
    v.x === v.y, v.deep.a[0].b.get('k').values().next().value instanceof Date, v.cyc.self === v.cyc && v.cyc.name === 'loop',
  ].map((ok, i) => (ok ? 'ok' : 'LOST#' + i)).join(',');
}`;

const { rich, kinds } = new Function(`${VALUES_SRC}; return { rich, kinds };`)() as { rich: () => Record<string, unknown>; kinds: (v: unknown) => string };
export const ALL_KEPT = kinds(rich());

/** A class instance in a value: what the refusal cases return. */
class User {
  constructor(readonly name: string) {}
}

export function valueScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('values keep their shape through a step, input, signal, event, a restart (replay) and a retry', async () => {
    const bodies = { make: 0, flaky: 0 };
    const seen: string[] = [];
    const wf = workflow('values-kinds', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step, ctx }) => {
        const made = await step.do('make', () => (bodies.make++, rich()));
        const retried = await step.do('flaky', { retries: { limit: 2, delay: 10, jitter: false } }, () => {
          if (++bodies.flaky === 1) throw new Error('first attempt fails');
          return rich();
        });
        const signal = await step.waitForEvent('go');
        await ctx.emit('values.rich', rich());
        return { input: kinds(input), made: kinds(made), retried: kinds(retried), signal: kinds(signal), value: made };
      });
    });
    const listener = workflow('values-listener', (w) => {
      w.trigger(event('values.rich'));
      w.run(async ({ input }) => {
        seen.push(kinds(input));
        return input;
      });
    });
    const { engine, dir } = await boot([wf, listener]);
    const { runId } = await engine.trigger('values-kinds', rich());
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    const again = await restart(engine, [wf, listener], dir);
    await again.signal(runId, 'go', rich());
    const view = await again.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    const out = view.output as unknown as { input: string; made: string; retried: string; signal: string; value: Record<string, unknown> };
    expect({ input: out.input, made: out.made, retried: out.retried, signal: out.signal }).toEqual({ input: ALL_KEPT, made: ALL_KEPT, retried: ALL_KEPT, signal: ALL_KEPT });
    expect(kinds(out.value)).toBe(ALL_KEPT); // engine.result gives the values, not their stored form
    expect(bodies).toEqual({ make: 1, flaky: 2 }); // 'make' replayed from the journal after the restart
    await until('event listener run', async () => (await again.runs.list({ workflow: 'values-listener' })).some((r) => r.status === 'succeeded'));
    const [l] = await again.runs.list({ workflow: 'values-listener' });
    expect(kinds((await again.result(l!.runId)).output)).toBe(ALL_KEPT);
  }, 60_000);

  test('a step result or emit payload that cannot be stored fails there, naming step and path; caught, the run goes on', async () => {
    let bodies = 0;
    const wf = workflow('values-refused', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const caught: string[] = [];
        try {
          await step.do('load', { retries: { limit: 3, delay: 10 } }, () => (bodies++, { items: [0, 1, 2, { owner: new User('ana') }] }));
        } catch (err) {
          caught.push(`${(err as Error).name}: ${(err as Error).message}`);
        }
        try {
          await ctx.emit('values.bad', { cb: function notify() {} });
        } catch (err) {
          caught.push(`${(err as Error).name}: ${(err as Error).message}`);
        }
        const after = await step.do('after', () => 'went on');
        return { caught, after };
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('values-refused', null);
    const view = await engine.result(runId, { timeout: '20s' });
    const expected = {
      caught: [
        "SerializationError: result of step 'load' at .items[3].owner: class instance User is not storable; return plain data",
        "SerializationError: ctx.emit('values.bad') payload at .cb: function notify is not storable; return plain data",
      ],
      after: 'went on',
    };
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(expected);
    expect(bodies).toBe(1); // not retried: the same body gives the same value
    expect(view.steps.find((s) => s.name === 'load')).toMatchObject({ status: 'failed', attempts: 1, error: { name: 'SerializationError' } });
    // The refusal is recorded: after a restart the run reads the same.
    const again = await restart(engine, [wf], dir);
    expect((await again.result(runId)).output).toEqual(expected);
  }, 60_000);

  test('an input, event or signal payload that cannot be stored is refused at the API, naming the path; nothing is stored', async () => {
    const waiter = workflow('values-wait', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('reply', { timeout: '20s' }));
    });
    const { engine } = await boot([waiter]);
    await expect(engine.trigger('values-wait', { who: new User('ana') })).rejects.toMatchObject({
      name: 'ValidationError', message: "input of trigger('values-wait') at .who: class instance User is not storable; return plain data",
    });
    expect(await engine.runs.list({ workflow: 'values-wait' })).toEqual([]);
    await expect(engine.emit('values.x', { at: Symbol('s') })).rejects.toThrow("payload of emit('values.x') at .at: Symbol(s) is not storable; return plain data");
    expect(await engine.events.list({ name: 'values.x' })).toEqual([]);
    const { runId } = await engine.trigger('values-wait', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await expect(engine.signal(runId, 'reply', [new WeakMap()])).rejects.toThrow("payload of signal('reply') at [0]: a WeakMap is not storable; return plain data");
    await engine.signal(runId, 'reply', new Map([['ok', 1]]));
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.output).toEqual(new Map([['ok', 1]]));
  }, 60_000);
}
