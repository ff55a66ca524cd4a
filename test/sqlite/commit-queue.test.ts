import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { CommitQueue } from '../../src/adapters/sqlite/commit-queue.ts';
import { openDatabase, SqliteStore } from '../../src/adapters/sqlite/store.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function store() {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-cq-'));
  dirs.push(dir);
  return new SqliteStore(openDatabase(dir, 'full'));
}

it('writes queued in one turn share one transaction and all resolve after commit', async () => {
  const s = store();
  const q = new CommitQueue(s);
  const ids = Array.from({ length: 50 }, (_, i) => `r${i}`);
  const created = await Promise.all(ids.map((runId) => q.enqueue(() => s.insertRun({ runId, workflow: 'w', version: 'v', input: null, now: 1 }))));
  expect(created.every(Boolean)).toBe(true);
  expect(q.stats).toEqual({ transactions: 1, writes: 50 });
  expect(s.listRunRows({ limit: 100 })).toHaveLength(50);
  s.close();
});

it('a write that throws fails alone; its neighbours commit', async () => {
  const s = store();
  const q = new CommitQueue(s);
  const good1 = q.enqueue(() => s.insertRun({ runId: 'a', workflow: 'w', version: 'v', input: null, now: 1 }));
  const bad = q.enqueue(() => {
    s.insertRun({ runId: 'half-done', workflow: 'w', version: 'v', input: null, now: 1 });
    throw new Error('boom');
  });
  const good2 = q.enqueue(() => s.insertRun({ runId: 'b', workflow: 'w', version: 'v', input: null, now: 1 }));
  await expect(bad).rejects.toThrow('boom');
  expect(await good1).toBe(true);
  expect(await good2).toBe(true);
  // The failed write's own partial effect is rolled back with it.
  expect(s.listRunRows({ limit: 10 }).map((r) => r.run_id).sort()).toEqual(['a', 'b']);
  s.close();
});

it("callers answered in slices queue their next writes; those commit together once the last is answered, and every one resolves", async () => {
  const s = store();
  const q = new CommitQueue(s);
  // 40 runs, each writing its next row as soon as its first is answered (a step, then the
  // next step), as 40 concurrent runs do: their first writes share one transaction; the
  // answers go out a slice per turn; the second writes wait for the last answer and share one.
  const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
  const second = await Promise.all(ids.map(async (runId) => {
    await q.enqueue(() => s.insertRun({ runId, workflow: 'w', version: 'v', input: null, now: 1 }));
    return q.enqueue(() => s.insertRun({ runId: `${runId}-next`, workflow: 'w', version: 'v', input: null, now: 2 }));
  }));
  expect(second.every(Boolean)).toBe(true);
  expect(q.stats).toEqual({ transactions: 2, writes: 80 });
  expect(s.listRunRows({ limit: 100 })).toHaveLength(80);
  await q.close();
  s.close();
});
