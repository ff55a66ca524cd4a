// Issue 37, "old data stays readable" and "tranquil check carries the new encoding": a run
// whose journal holds both forms (entries written before the value codec, a tagged one after)
// finishes with its values and replays in the check; the replay check (`tranquil check`,
// replayFixture) hands the code the decoded values, so code that uses a recorded Map replays.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createTestEngine, replayFixture } from '@tranquil/engine/testing';
import { fixtureOf } from '../../compose/fixtures.ts';
import { ReadOnlyFile } from '../../src/adapters/sqlite/run-reader.ts';
import { checkInFlight } from '../../src/runtime/replay-check.ts';
import { legacyCalls, legacyOutput, legacyValues } from './fixtures/legacy-values.ts';
import { scratch } from './scratch.ts';

const { open, newDir } = scratch('values-check');

it('a journal holding both forms (recorded before the codec, tagged after) finishes with its values and replays in the check', async () => {
  const dir = newDir();
  copyFileSync(join(import.meta.dirname, 'fixtures', 'values-v0', 'tranquil.db'), join(dir, 'tranquil.db'));
  const t = await createTestEngine({ workflows: [legacyValues], dataDir: dir });
  open.push(t);
  const go = { at: new Date(0), lines: new Map([['sku', 2]]), total: 10n };
  await t.engine.signal('legacy-waiting', 'go', go);
  const view = await t.engine.result('legacy-waiting', { timeout: '10s' });
  expect(view.output).toEqual(legacyOutput({ when: '1970-01-01T00:00:00.000Z', tags: {} }, go));
  expect(legacyCalls.bodies).toBe(0);
  const stored = await t.engine.runs.get('legacy-waiting');
  expect(stored.steps.map((s) => s.result)).toContainEqual({}); // the old Map, as JSON left it
  expect(JSON.stringify(stored.output)).toContain('$tqv'); // the new Date, Map, BigInt: tagged
  const fixture = JSON.parse(JSON.stringify(fixtureOf(stored))) as unknown;
  await expect(replayFixture(legacyValues, fixture)).resolves.toMatchObject({ ok: true });
});

it('the replay check gives the code the decoded values: code that uses a recorded Map and Date replays; a reorder is still flagged', async () => {
  const dir = newDir();
  let bodies = 0;
  const shaped = (order: 'same' | 'reordered') => workflow('shaped', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => {
      const m = await step.do('make', () => (bodies++, new Map([['next', 'b']])));
      // Both names need the decoded values: a Map's get, the input Date's year.
      const names = [`use-${m.get('next')}`, `year-${(input as { at: Date }).at.getUTCFullYear()}`];
      for (const n of order === 'same' ? names : names.reverse()) await step.do(n, () => (bodies++, n));
      await step.sleep('nap', '1h');
    });
  });
  const t = await createTestEngine({ workflows: [shaped('same')], dataDir: dir });
  open.push(t);
  await t.engine.trigger('shaped', { at: new Date(0) }, { runId: 'S' });
  await t.idle();
  expect((await t.engine.runs.get('S')).steps.map((s) => s.name)).toEqual(['make', 'use-b', 'year-1970', 'nap']);
  await t.close();
  open.length = 0;
  bodies = 0;
  const reader = ReadOnlyFile.open(dir)!.runReader();
  try {
    expect((await checkInFlight(reader, [shaped('same')])).map((v) => v.ok)).toEqual([true]);
    expect(await checkInFlight(reader, [shaped('reordered')])).toMatchObject([{ ok: false, position: 1, expected: "do 'year-1970'", recorded: "do 'use-b'" }]);
  } finally {
    await reader.close();
  }
  expect(bodies).toBe(0);
});
