// The pre-deploy replay check (issue 13, docs/data.md): `tranquil check <file-or-dir>`
// replays every in-flight run's journal against new code without running a step body; it
// flags a reordered step (run id, position, expected vs recorded; exit 1) and passes the
// unchanged file (exit 0). On the SQLite file here; it reads runs through the backend's
// RunReader, the same one `runs describe` uses on Restate.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { tranquilCli } from '../cli-bin.ts';
import { manual, workflow } from '@tranquil/sdk';
import { createTestEngine, replayFixture } from '@tranquil/engine/testing';
import { NonDeterminismError } from '@tranquil/engine';
import { fixtureOf } from '../../compose/fixtures.ts';
import { ReadOnlyFile } from '../../src/adapters/sqlite/run-reader.ts';
import { checkInFlight } from '../../src/runtime/replay-check.ts';
import v1 from './fixtures/check/v1.ts';
import reordered from './fixtures/check/v2-reordered.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('flags a reordered step and passes the unchanged code, running no step body', async () => {
  const t = await createTestEngine({ workflows: [v1], dataDir: dir });
  const { runId } = await t.engine.trigger('checked', null); // asleep after 'a'
  const second = (await t.engine.trigger('checked', null)).runId; // asleep too
  await t.idle();
  await t.close();
  expect((await checkInFlight(ReadOnlyFile.open(dir)!.runReader(), [v1])).map((v) => v.ok)).toEqual([true, true]);
  expect(second).not.toBe(runId);

  // A body that would count if the check ran it.
  let ran = 0;
  const counting = workflow('checked', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      await step.do('a', () => ++ran);
      await step.sleep('nap', '1h');
      return step.do('b', () => ++ran);
    });
  });
  const reader = ReadOnlyFile.open(dir)!.runReader();
  const same = await checkInFlight(reader, [counting]);
  expect(same.every((v) => v.ok)).toBe(true);
  expect(ran).toBe(0);
  const changed = await checkInFlight(reader, [reordered]);
  await reader.close();
  expect(changed).toHaveLength(2);
  expect(changed[0]).toMatchObject({ ok: false, position: 0, expected: "do 'b'", recorded: "do 'a'" });

  // The command: exit 1 with the diverging runs listed, exit 0 for the unchanged file.
  const bin = tranquilCli();
  const fixtures = join(import.meta.dirname, 'fixtures/check');
  const r = spawnSync(process.execPath, [bin, 'check', join(fixtures, 'v2-reordered.ts'), '--data-dir', dir, '--json'], { cwd: fixtures, encoding: 'utf8', env: { ...process.env, TRANQUIL_BACKEND: 'sqlite' } });
  expect(r.status, r.stderr).toBe(1);
  const out = JSON.parse(r.stdout) as { checked: number; diverging: { runId: string; position: number }[] };
  expect(out.checked).toBe(2);
  expect(out.diverging.map((d) => d.runId).sort()).toEqual([runId, second].sort());
}, 60_000);

it('a run journal as a fixture replays against the code in a test; a reorder rejects with NonDeterminismError', async () => {
  const reader = ReadOnlyFile.open(dir)!.runReader();
  const page = await reader.listRuns({ workflow: 'checked', limit: 1 });
  const view = (await reader.getRun(page.runs[0]!.runId))!;
  await reader.close();
  const fixture = JSON.parse(JSON.stringify(fixtureOf(view))) as unknown; // as written to a file
  await expect(replayFixture(v1, fixture)).resolves.toMatchObject({ ok: true });
  const err = await replayFixture(reordered, fixture).catch((e: Error) => e);
  expect(err).toBeInstanceOf(NonDeterminismError);
  expect((err as Error).message).toContain("position 0: code now calls do 'b', journal recorded do 'a'");
  await expect(replayFixture(v1, { ...(fixture as object), steps: 'nope' })).rejects.toThrow(/fixture.*steps/);
});
