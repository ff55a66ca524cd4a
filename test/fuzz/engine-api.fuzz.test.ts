// Fuzz every engine API input (names, ids, payloads, durations, options, filters) on a real
// SQLite file: each call resolves or rejects with a documented error; a rejected call
// leaves the file exactly as it was; nothing throws synchronously or rejects unhandled.
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { event, manual, workflow } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { anyName, anyValue, StoredState, undocumented } from './oracle.ts';

export const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);

let t: TestEngine;
let stored: StoredState;
const known: string[] = [];
const unresolved: string[] = [];

beforeAll(async () => {
  const fz = workflow('fz', (w) => {
    w.trigger(manual());
    w.trigger(event('fz.evt'));
    w.run(async ({ input, step }) => {
      const a = await step.do('a', () => input);
      if ((input as { fail?: boolean } | null)?.fail) throw new Error('asked to fail');
      if ((input as { wait?: boolean } | null)?.wait) await step.waitForEvent('go', { timeout: '1h' });
      return a;
    });
  });
  t = await createTestEngine({ workflows: [fz] });
  stored = new StoredState(join(t.dataDir, 'tranquil.db'));
  for (const [id, input] of [['ok-1', {}], ['failed-1', { fail: true }], ['waiting-1', { wait: true }]] as const) {
    await t.engine.trigger('fz', input, { runId: id });
    known.push(id);
  }
  await t.idle();
});
afterAll(async () => {
  stored?.close();
  await t?.close();
});

const runId = fc.oneof(fc.constantFrom('ok-1', 'failed-1', 'waiting-1', 'nope'), anyName);
const options = fc.oneof(anyValue, fc.record({ runId: anyName }, { requiredKeys: [] }), fc.record({ id: anyName }, { requiredKeys: [] }));
const filter = fc.oneof(
  anyValue,
  fc.record({ status: anyName, workflow: anyName, limit: anyValue, name: anyName, unmatched: anyValue, fate: anyName, cursor: anyName }, { requiredKeys: [] }),
);

type Call = { label: string; invoke: () => Promise<unknown> };
/** Shown by fast-check in a counterexample: the call with its arguments. */
const show = (label: string, args: unknown[], invoke: () => Promise<unknown>): Call =>
  Object.assign({ label, invoke }, { [fc.toStringMethod]: () => `${label}(${args.map((a) => fc.stringify(a)).join(', ')})` });
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.tuple(fc.oneof(fc.constant('fz'), anyName), anyValue, options).map(([w, i, o]) => show('trigger', [w, i, o], () => t.engine.trigger(w as string, i, o as never))),
  fc.tuple(fc.oneof(fc.constant('fz.evt'), anyName), anyValue, options).map(([n, p, o]) => show('emit', [n, p, o], () => t.engine.emit(n as string, p, o as never))),
  fc.tuple(runId, fc.oneof(fc.constant('go'), anyName), anyValue).map(([r, n, p]) => show('signal', [r, n, p], () => t.engine.signal(r as string, n as string, p))),
  runId.map((r) => show('runs.get', [r], () => t.engine.runs.get(r as string))),
  runId.map((r) => show('runs.cancel', [r], () => t.engine.runs.cancel(r as string))),
  runId.map((r) => show('runs.retry', [r], () => t.engine.runs.retry(r as string))),
  runId.map((r) => show('runs.explain', [r], () => t.engine.runs.explain(r as string))),
  filter.map((f) => show('runs.list', [f], () => t.engine.runs.list(f as never))),
  filter.map((f) => show('events.list', [f], () => t.engine.events.list(f as never))),
  filter.map((f) => show('schedules.slots', [f], () => t.engine.schedules.slots(f as never))),
  anyName.map((w) => show('schedules.explain', [w], () => t.engine.schedules.explain(w as string))),
  anyName.map((w) => show('webhookUrl', [w], () => t.engine.webhookUrl(w as string))),
  // result(): only runs that are finished or unknown, so an arbitrary timeout cannot hang the test.
  fc.tuple(fc.oneof(fc.constantFrom('ok-1', 'nope'), anyName), fc.oneof(anyValue, fc.record({ timeout: anyValue }, { requiredKeys: [] }))).map(([r, o]) =>
    show('result', [r, o], () => (typeof r === 'string' && !['ok-1', 'nope'].includes(r) && known.includes(r) ? Promise.resolve() : t.engine.result(r as string, o as never))),
  ),
);

it(`engine API: ${RUNS} random calls, only documented errors, rejected input changes nothing`, async () => {
  let rejected = 0;
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(call, async (c) => {
      await t.idle();
      const before = stored.now();
      let outcome: { ok: true; value: unknown } | { ok: false; err: unknown };
      try {
        const p = c.invoke();
        expect(p, `${c.label} returns a promise (no synchronous throw)`).toBeInstanceOf(Promise);
        outcome = { ok: true, value: await p };
      } catch (err) {
        outcome = { ok: false, err };
      }
      if (outcome.ok) {
        accepted++;
        const v = outcome.value as { runId?: string; runIds?: string[] } | undefined;
        if (v?.runId) known.push(v.runId);
        for (const id of v?.runIds ?? []) known.push(id);
        return;
      }
      rejected++;
      const bad = undocumented(outcome.err);
      if (bad) unresolved.push(`${c.label}: ${bad}`);
      expect(bad, `${c.label} rejected with an undocumented error`).toBeUndefined();
      expect(stored.now(), `${c.label} was rejected but changed the file`).toBe(before);
    }),
    { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
  );
  console.log(`engine API fuzz: ${RUNS} calls (${accepted} accepted, ${rejected} rejected with documented errors)`);
}, 180_000);
