// An input or signal payload that is a thenable (or a Proxy whose traps throw) is checked as a
// value, not adopted as a promise by the async boundary checks: before, a thenable input became
// its resolution silently and a throwing Proxy escaped as a raw Error (engine-API fuzzer).
import { afterEach, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '../../compose/testing.ts';
import { manual, workflow } from '../../sdk/index.ts';

const echo = workflow('echo', (w) => {
  w.trigger(manual());
  w.run(async ({ input }) => input);
});
let t: TestEngine | undefined;
afterEach(async () => t?.close());

it('a thenable or throwing-Proxy input is refused in one line, nothing started', async () => {
  t = await createTestEngine({ workflows: [echo] });
  const thenable = { then(resolve: (v: unknown) => void) { resolve(5); } };
  await expect(t.engine.trigger('echo', thenable)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/^input of trigger\('echo'\): a Promise \(await it first\) is not storable/) });
  const proxy = new Proxy({}, { get() { throw new Error('proxy exploded'); }, ownKeys() { throw new Error('proxy exploded'); } });
  await expect(t.engine.trigger('echo', proxy)).rejects.toMatchObject({ name: 'ValidationError' });
  expect(await t.engine.runs.list()).toEqual([]);
});
