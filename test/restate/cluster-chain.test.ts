// In a cluster (`restate.triggers: 'restate'`) a chain of child runs may pass through several
// replicas, and a replica's own file holds only the links it wrote. The depth limit and the
// cycle check must read every replica's links (Restate's `tqlinks` objects), not the file's:
// here each run wipes this replica's link rows before it starts its child, as if another
// replica had started it, and the limits must still hold (docs/children.md).
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { removeDataDir } from './data-dir.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-chain-'));
/** What another replica's file would hold of this chain: none of its links. */
const forgetLinks = () => {
  const db = new Database(join(dir, 'tranquil.db'));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('DELETE FROM run_links').run();
  } finally {
    db.close();
  }
};

const deep = workflow('chain-deep', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const n = (input as { n: number }).n;
    await step.do('forget', forgetLinks);
    if (n < 40) await step.invoke('down', deep, { n: n + 1 });
    return n;
  });
});
const loop = workflow('chain-loop', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const { top, n } = input as { top: string; n: number };
    await step.do('forget', forgetLinks);
    // The grandchild asks for the top run's id: a cycle through two replicas' links.
    if (n < 2) await step.invoke('down', loop, { top, n: n + 1 }, n === 1 ? { runId: top } : {});
    return n;
  });
});

describe('child-run limits across replicas (Restate cluster links)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ backend: 'restate', dataDir: dir, workflows: [deep, loop], restate: { triggers: 'restate' } });
    await engine.start();
  }, 120_000);
  afterAll(async () => {
    await engine?.stop();
    removeDataDir(dir);
  });

  it('a chain deeper than 32 is refused at depth 33 though this file knows none of its links', async () => {
    const { runId } = await engine.trigger('chain-deep', { n: 0 });
    const end = await engine.result(runId, { timeout: '240s' });
    expect(end.status).toBe('failed');
    const runs = await engine.runs.list({ workflow: 'chain-deep', limit: 100 });
    // The top run and 32 levels of children; the 33rd start was refused.
    expect(runs.length).toBe(33);
    const refused = [];
    for (const r of runs) {
      const v = await engine.runs.get(r.runId);
      if (v.error?.message.includes('past the limit of 32 nested child runs')) refused.push(v);
    }
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.some((v) => /would be at depth 33, past the limit of 32/.test(v.error!.message))).toBe(true);
  }, 300_000);

  it('a grandchild given its top run\'s id is refused as a cycle, naming the call chain', async () => {
    const top = 'chain-loop-top';
    const { runId } = await engine.trigger('chain-loop', { top, n: 0 }, { runId: top });
    const end = await engine.result(runId, { timeout: '120s' });
    expect(end.status).toBe('failed');
    const runs = await engine.runs.list({ workflow: 'chain-loop', limit: 10 });
    const msgs = await Promise.all(runs.map(async (r) => (await engine.runs.get(r.runId)).error?.message ?? ''));
    expect(msgs.some((m) => m.includes(`child run '${top}' would be its own ancestor`))).toBe(true);
  }, 180_000);
});
