// runs.fork on the Restate backend: the fork's reused steps are kept with its outbox row until
// Restate has the run, so a restart that forwards the pending row again hands them over too
// (docs/control.md, Fork). The SQLite trigger store is that outbox.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SqliteTriggerStore } from '../../src/adapters/sqlite/trigger-store.ts';
import type { JournalEntry } from '../../src/domain/journal.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it("a pending fork's outbox row gives back its fork point and reused steps; its view fields say where it was forked from", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-fork-outbox-'));
  dirs.push(dataDir);
  const store = new SqliteTriggerStore({ dataDir, durability: 'normal' });
  await store.open();
  try {
    const entries: JournalEntry[] = [
      { seq: 0, name: 'a', kind: 'do', status: 'succeeded', attempts: 1, result: { n: 1 }, startedAt: 10, endedAt: 20, order: 1 },
      { seq: 2, name: 'go', kind: 'wait', status: 'succeeded', attempts: 1, result: 'x', startedAt: 20, endedAt: 30, order: 2 },
    ];
    const fork = { from: { seq: 3, name: 'b' }, entries };
    await store.write((w) => w.insertRun({ runId: 'orig', workflow: 'wf', version: 'v1', input: { x: 1 } }, 1));
    await store.write((w) => w.insertRun({ runId: 'forked', workflow: 'wf', version: 'v1', input: { x: 1 }, rerunOf: 'orig', fork }, 2));
    const pending = await store.pendingRuns(10);
    expect(pending.find((r) => r.runId === 'forked')).toEqual({ runId: 'forked', workflow: 'wf', version: 'v1', input: { x: 1 }, rerunOf: 'orig', fork });
    expect(pending.find((r) => r.runId === 'orig')!.fork).toBeUndefined();
    expect(await store.controlOf('forked', true)).toMatchObject({ rerunOf: 'orig', forkedFrom: { seq: 3, name: 'b' } });
    expect((await store.controlOf('orig', true)).reruns).toEqual(['forked']);
  } finally {
    await store.close();
  }
});
