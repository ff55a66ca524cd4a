// A crash of the process after a child run was started and before the parent recorded the
// step that started it (fault point 'after-child-start'): the restarted engine re-runs the
// step's body, which finds the same child (its run id is derived from the parent and the
// step, and starting a run with an id is idempotent). Exactly one child; the parent's result
// is the child's output; the child's own step ran once.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { FaultCrash, FaultPoints } from '../../src/adapters/sqlite/fault-points.ts';

const dirs: string[] = [];
const open: TestEngine[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it("a crash at 'after-child-start' leaves exactly one child, whose output the parent records", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-child-crash-'));
  dirs.push(dir);
  const childBodies: string[] = [];
  const child = workflow('child', (w) => {
    w.trigger(manual());
    w.run(async ({ step, ctx }) => {
      await step.sleep('first', '1m'); // the child is still running when the parent crashes
      return step.do('work', () => (childBodies.push(ctx.runId), `made by ${ctx.runId}`));
    });
  });
  const parent = workflow('parent', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.invoke('make', child, null));
  });
  const faults = new FaultPoints().crash('after-child-start', 1);
  const t = await createTestEngine({ dataDir: dir, workflows: [child, parent], startAt: Date.parse('2026-05-01T00:00:00Z'), faults });
  await t.engine.trigger('parent', null, { runId: 'p' });
  await t.advance('1s').catch((err) => {
    if (!(err instanceof FaultCrash)) throw err;
  });
  expect(faults.crashedAt).toBe('after-child-start');
  const clock = t.now();
  // As the OS would after the process died: its pid no longer holds the lease.
  const db = new Database(join(dir, 'tranquil.db'));
  expect(db.prepare(`SELECT count(*) AS n FROM steps s JOIN runs r ON r.created_seq = s.run_seq WHERE r.run_id = 'p'`).get()).toEqual({ n: 0 });
  expect(db.prepare(`SELECT run_id FROM runs WHERE run_id != 'p'`).all()).toEqual([{ run_id: 'p:make' }]);
  db.prepare(`UPDATE owner SET pid = ? WHERE id = 1`).run(2 ** 22 + 4242);
  db.close();

  const again = await createTestEngine({ dataDir: dir, workflows: [child, parent], startAt: clock });
  open.push(again);
  await again.advance('5m');
  const view = await again.engine.runs.get('p');
  expect(view.status).toBe('succeeded');
  expect(view.output).toBe('made by p:make');
  expect((await again.engine.runs.list({ parent: 'p' })).map((r) => r.runId)).toEqual(['p:make']);
  expect((await again.engine.runs.list({})).map((r) => r.runId).sort()).toEqual(['p', 'p:make']);
  expect(childBodies).toEqual(['p:make']);
  expect(view.steps.find((s) => s.name === 'make')?.result).toBe('p:make');
});
