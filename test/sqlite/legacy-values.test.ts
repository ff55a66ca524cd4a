// Old data stays readable (issue 37): a data dir and a .tqrun written by the release before
// the value codec (test/sqlite/fixtures/values-v0/, made by make-values-v0.ts) replay
// unchanged: the recorded results decode exactly as JSON gave them then ({} for the Map, the
// Date's ISO text), no recorded body runs again, and the waiting run finishes.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { resolveConfig } from '../../compose/config.ts';
import { exportRunFile, importRunFile } from '../../compose/run-file.ts';
import { manual, workflow } from '@tranquil/sdk';
import { ALL_KEPT, VALUES_SRC } from '../conformance/values.ts';
import { legacyCalls, legacyOutput, legacyValues } from './fixtures/legacy-values.ts';
import { scratch } from './scratch.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'values-v0');
const { open, newDir } = scratch('legacy');
const oldInput = { when: '1970-01-01T00:00:00.000Z', tags: {} };

it("a journal written before the value codec replays unchanged; its finished run reads as it was", async () => {
  const dir = newDir();
  copyFileSync(join(FIXTURE, 'tranquil.db'), join(dir, 'tranquil.db'));
  const t = await createTestEngine({ workflows: [legacyValues], dataDir: dir });
  open.push(t);
  const done = await t.engine.result('legacy-done', { timeout: '5s' });
  expect(done.output).toEqual(legacyOutput({ n: 1 }, { ok: true }));
  expect(done.steps.map((s) => s.result)).toEqual([{}, {}, '1970-01-01T00:00:00.000Z', legacyOutput(0, 0).obj, undefined, { ok: true }]);
  expect((await t.engine.runs.get('legacy-waiting')).input).toEqual(oldInput);
  await t.engine.signal('legacy-waiting', 'go', { n: 2 });
  const view = await t.engine.result('legacy-waiting', { timeout: '10s' });
  expect(view.status).toBe('succeeded');
  expect(view.output).toEqual(legacyOutput(oldInput, { n: 2 }));
  expect(legacyCalls.bodies).toBe(0);
});

it('a .tqrun exported before the value codec imports and finishes the same way', async () => {
  const dir = newDir();
  await importRunFile(resolveConfig({ dataDir: dir, backend: 'sqlite' }), join(FIXTURE, 'legacy-waiting.tqrun'));
  const t = await createTestEngine({ workflows: [legacyValues], dataDir: dir });
  open.push(t);
  await t.engine.signal('legacy-waiting', 'go', { n: 3 });
  const view = await t.engine.result('legacy-waiting', { timeout: '10s' });
  expect(view.status).toBe('succeeded');
  expect(view.output).toEqual(legacyOutput(oldInput, { n: 3 }));
  expect(legacyCalls.bodies).toBe(0);
});

const { rich, kinds } = new Function(`${VALUES_SRC}; return { rich, kinds };`)() as { rich: () => Record<string, unknown>; kinds: (v: unknown) => string };
let richBodies = 0;
const richMover = workflow('rich-mover', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const made = await step.do('make', () => (richBodies++, rich()));
    const go = await step.waitForEvent('go');
    return { input: kinds(input), made: kinds(made), go: kinds(go) };
  });
});

it('a run holding every kept kind exports to a .tqrun and resumes from it in a fresh data dir with its values', async () => {
  const src = newDir();
  const t = await createTestEngine({ workflows: [richMover], dataDir: src });
  open.push(t);
  const { runId } = await t.engine.trigger('rich-mover', rich());
  await t.idle();
  await t.close();
  open.length = 0;
  const path = join(newDir(), 'rich.tqrun');
  exportRunFile(resolveConfig({ dataDir: src, backend: 'sqlite' }), runId, path);
  const dst = newDir();
  await importRunFile(resolveConfig({ dataDir: dst, backend: 'sqlite' }), path);
  const u = await createTestEngine({ workflows: [richMover], dataDir: dst, startAt: t.now() });
  open.push(u);
  await u.engine.signal(runId, 'go', rich());
  const view = await u.engine.result(runId, { timeout: '10s' });
  expect(view.output).toEqual({ input: ALL_KEPT, made: ALL_KEPT, go: ALL_KEPT });
  expect(richBodies).toBe(1);
});
