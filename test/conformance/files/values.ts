// The value codec's conformance cases THROUGH THE RUNNER (test/conformance/values.ts): the
// same workflow source run in Deno children, so the child's encoding and the engine's agree.
import { expect } from 'vitest';
import { ALL_KEPT, VALUES_SRC } from '../values.ts';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

const P = `{ permissions: ${OUT_PERMISSIONS} }`;
const { rich, kinds } = new Function(`${VALUES_SRC}; return { rich, kinds };`)() as { rich: () => Record<string, unknown>; kinds: (v: unknown) => string };

export function valueFileScenarios({ test, boot }: FileKit): void {
  test('values keep their shape through a step, input, signal, event, a restart (replay) and a retry', async () => {
    const rig = await boot([`
${VALUES_SRC}
export default workflow('values-kinds', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step, ctx }) => {
    const made = await step.do('make', () => (hit('make'), rich()));
    const retried = await step.do('flaky', { retries: { limit: 2, delay: 10, jitter: false } }, () => {
      hit('flaky');
      if (read('flaky').length === 1) throw new Error('first attempt fails');
      return rich();
    });
    const signal = await step.waitForEvent('go');
    await ctx.emit('values.rich', rich());
    return { input: kinds(input), made: kinds(made), retried: kinds(retried), signal: kinds(signal), value: made };
  });
});`, `
${VALUES_SRC}
export default workflow('values-listener', ${P}, (w) => {
  w.trigger(event('values.rich'));
  w.run(async ({ input }) => input);
});`]);
    const { runId } = await rig.engine.trigger('values-kinds', rich());
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    const again = await rig.restart();
    await again.signal(runId, 'go', rich());
    const view = await again.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    const out = view.output as unknown as { input: string; made: string; retried: string; signal: string; value: Record<string, unknown> };
    expect({ input: out.input, made: out.made, retried: out.retried, signal: out.signal }).toEqual({ input: ALL_KEPT, made: ALL_KEPT, retried: ALL_KEPT, signal: ALL_KEPT });
    expect(kinds(out.value)).toBe(ALL_KEPT);
    expect([rig.hits('make'), rig.hits('flaky')]).toEqual([1, 2]);
    await until('event listener run', async () => (await again.runs.list({ workflow: 'values-listener' })).some((r) => r.status === 'succeeded'));
    const [l] = await again.runs.list({ workflow: 'values-listener' });
    expect(kinds((await again.result(l!.runId)).output)).toBe(ALL_KEPT);
  });

  test('a step result or emit payload that cannot be stored fails there, naming step and path; caught, the run goes on', async () => {
    const rig = await boot(`
class User { constructor(name) { this.name = name; } }
export default workflow('values-refused', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const caught = [];
    try {
      await step.do('load', { retries: { limit: 3, delay: 10 } }, () => (hit('load'), { items: [0, 1, 2, { owner: new User('ana') }] }));
    } catch (err) {
      caught.push(err.name + ': ' + err.message);
    }
    try {
      await ctx.emit('values.bad', { cb: function notify() {} });
    } catch (err) {
      caught.push(err.name + ': ' + err.message);
    }
    const after = await step.do('after', () => 'went on');
    return { caught, after };
  });
});`);
    const { runId } = await rig.engine.trigger('values-refused', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    const expected = {
      caught: [
        "SerializationError: result of step 'load' at .items[3].owner: class instance User is not storable; return plain data",
        "SerializationError: ctx.emit('values.bad') payload at .cb: function notify is not storable; return plain data",
      ],
      after: 'went on',
    };
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(expected);
    expect(rig.hits('load')).toBe(1);
    expect(view.steps.find((s) => s.name === 'load')).toMatchObject({ status: 'failed', attempts: 1, error: { name: 'SerializationError' } });
    const again = await rig.restart();
    expect((await again.result(runId)).output).toEqual(expected);
  });

  test('retries.delay as a function of the attempt and its error sets each wait; maxAttempts counts every attempt', async () => {
    const rig = await boot(`
export default workflow('delay-fn', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('call', { retries: { maxAttempts: 3, delay: (attempt, error) => (hit('waits', attempt + ':' + error.name + ':' + error.status + ','), attempt * 40) } }, () => {
    hit('calls');
    throw Object.assign(new RangeError('busy'), { status: 503 });
  }));
});`);
    const view = await rig.engine.result((await rig.engine.trigger('delay-fn', null)).runId, { timeout: '60s' });
    expect(view.status).toBe('failed');
    expect(rig.hits('calls')).toBe(3);
    expect(rig.text('waits')).toBe('1:RangeError:503,2:RangeError:503,');
    expect(view.steps[0]).toMatchObject({ status: 'failed', attempts: 3 });
  });
}
