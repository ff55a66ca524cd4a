// A run whose code diverged from its journal reads the same from every replica: the engine
// that saw the divergence ends the invocation and records the NonDeterminismError in Restate
// (divergence-object.ts), not only in its own data dir. A reader with another data dir (a
// second replica's CLI, here) shows the run failed with that error, where a killed
// invocation alone would read as cancelled. A real restate-server.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';
import { resolveConfig } from '../../compose/config.ts';
import { openRunReader } from '../../compose/run-reader.ts';
import { readAdminFile } from '../../src/adapters/restate/server-process.ts';
import { removeDataDir } from './data-dir.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-diverged-'));
const other = mkdtempSync(join(tmpdir(), 'tranquil-rs-diverged-other-'));
const open: Engine[] = [];
afterAll(async () => {
  for (const e of open) await e.stop().catch(() => {});
  removeDataDir(dir);
  removeDataDir(other);
}, 30_000);

it("a diverged run is failed with its NonDeterminismError from another data dir's reader too", async () => {
  const mode = { step: 'a' };
  const wf = workflow('shifty', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      await step.do(mode.step, () => 1);
      await step.sleep('nap', 300);
      return 'done';
    });
  });
  const first = await createEngine({ backend: 'restate', dataDir: dir, workflows: [wf] });
  open.push(first);
  await first.start();
  const { runId } = await first.trigger('shifty', null);
  for (let i = 0; i < 500 && (await first.runs.get(runId)).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 10));
  await first.stop();
  mode.step = 'b';
  const second = await createEngine({ backend: 'restate', dataDir: dir, workflows: [wf] });
  open.push(second);
  await second.start();
  const seen = await second.result(runId, { timeout: '20s' });
  expect(seen).toMatchObject({ status: 'failed', error: { name: 'NonDeterminismError' } });

  // Another data dir, the same Restate: what a second replica or its CLI reads.
  const adminUrl = readAdminFile(dir)!.adminUrl;
  const reader = (await openRunReader(resolveConfig({ backend: 'restate', dataDir: other, restate: { adminUrl, ingressUrl: 'http://127.0.0.1:1' } })))!;
  try {
    const v = await reader.getRun(runId);
    expect(v).toMatchObject({ status: 'failed', error: { name: 'NonDeterminismError', message: seen.error!.message } });
    const listed = (await reader.listRuns({ workflow: 'shifty' })).runs.find((r) => r.runId === runId);
    expect(listed).toMatchObject({ status: 'failed', error: { name: 'NonDeterminismError' } });
  } finally {
    await reader.close();
  }
}, 120_000);
