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

it('callers answered in slices queue their next writes; with no sync in flight those commit before the last caller is answered, and every one resolves', async () => {
  const s = store();
  const q = new CommitQueue(s);
  expect(q.walSync).toBeDefined(); // durability 'full' on a file: the sync runs on the pool
  // 40 runs, each writing its next row as soon as its first is answered (a step, then the
  // next step), as 40 concurrent runs do: their first writes share one transaction, whose
  // sync ends before anyone is answered; the answers then go out 16 per turn. The disk is
  // idle then, so the writes of the first callers answered commit (and sync) while the
  // rest are still being answered, instead of the disk waiting for the last answer.
  const events: string[] = [];
  const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
  const second = await Promise.all(ids.map(async (runId) => {
    await q.enqueue(() => s.insertRun({ runId, workflow: 'w', version: 'v', input: null, now: 1 }));
    events.push(`answered ${runId}`);
    return q.enqueue(() => {
      events.push(`committing ${runId}-next`);
      return s.insertRun({ runId: `${runId}-next`, workflow: 'w', version: 'v', input: null, now: 2 });
    });
  }));
  expect(second.every(Boolean)).toBe(true);
  const lastAnswer = events.lastIndexOf('answered r39');
  const firstCommit = events.findIndex((e) => e.startsWith('committing'));
  expect(firstCommit).toBeGreaterThan(-1);
  expect(firstCommit).toBeLessThan(lastAnswer);
  // Still batched: the 40 second writes did not take a transaction each.
  expect(q.stats.writes).toBe(80);
  expect(q.stats.transactions).toBeLessThanOrEqual(4);
  expect(s.listRunRows({ limit: 100 })).toHaveLength(80);
  await q.close();
  s.close();
});

it('without a sync of its own (durability normal) the next writes wait for the last answer and share one transaction', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-cq-'));
  dirs.push(dir);
  const s = new SqliteStore(openDatabase(dir, 'normal'));
  const q = new CommitQueue(s);
  expect(q.walSync).toBeUndefined();
  const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
  const second = await Promise.all(ids.map(async (runId) => {
    await q.enqueue(() => s.insertRun({ runId, workflow: 'w', version: 'v', input: null, now: 1 }));
    return q.enqueue(() => s.insertRun({ runId: `${runId}-next`, workflow: 'w', version: 'v', input: null, now: 2 }));
  }));
  expect(second.every(Boolean)).toBe(true);
  expect(q.stats).toEqual({ transactions: 2, writes: 80 });
  await q.close();
  s.close();
});
