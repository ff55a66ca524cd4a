// Flow control is built on SQLite only so far (issue 39, docs/flow-control.md): on Restate a
// workflow with run-level queues (options.runs) is refused when the engine starts, in one
// line naming it, instead of running with its limit silently ignored.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import { createEngine } from '@tranquil/engine';
import { removeDataDir } from './data-dir.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-queues-'));
afterAll(() => removeDataDir(dir));

it('start() refuses a workflow with options.runs on Restate, naming it', async () => {
  const q = queue('per-user', { key: { concurrency: 1 } });
  const wf = workflow('limited', { runs: { queue: q, key: (i: { user: string }) => i.user } }, (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.do('x', () => 1));
  });
  const engine = await createEngine({ backend: 'restate', dataDir: dir, workflows: [wf] });
  try {
    await expect(engine.start()).rejects.toThrow(/^workflow 'limited' options\.runs: run-level queues are not built on the Restate backend yet \(issue 39\); use the SQLite backend or remove the option$/);
  } finally {
    await engine.stop().catch(() => {});
  }
}, 60_000);
