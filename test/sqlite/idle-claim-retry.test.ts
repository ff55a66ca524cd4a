// A timer claim that fails on storage (here: SQLITE_BUSY, another connection holds the write
// lock) is retried on a real timer. Until that retry ran, what was due is not claimed, yet no
// time has to pass for it: the test engine's idle() and advance() wait for it. They did not:
// idle() resolved with the claim pending, advance() moved the clock past the due run and the
// schedule slots after it, and the next engine on the file caught them up at its start (the
// long simulation's seed 6130219: "a restart on the finished file changed runs or steps").
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { schedule, workflow } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { DB_FILE } from '../../src/adapters/sqlite/store.ts';

const open: TestEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const t of open.splice(0)) await t.close().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const turn = () => new Promise((r) => setImmediate(r));

/** Holds the file's write lock from a second connection until the engine reports a failed
 *  claim, while `act` runs; then lets go. Resolves with what `act` resolved to. The holder is
 *  on this thread, so the claim's IMMEDIATE transaction waits out busy_timeout (5 s) and fails:
 *  the lock outlives any wait, as a stuck process's would. */
async function withClaimFailing<T>(t: TestEngine, act: () => Promise<T>): Promise<T> {
  const errors: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
  const lock = new Database(join(t.dataDir, DB_FILE));
  lock.exec('BEGIN IMMEDIATE');
  try {
    const p = act();
    for (let i = 0; i < 1000 && !errors.some((e) => e.includes('due timers could not be claimed')); i++) await turn();
    expect(errors.join('\n')).toMatch(/due timers could not be claimed \(will retry\): .*SQLITE_BUSY/);
    lock.exec('ROLLBACK');
    return await p;
  } finally {
    if (lock.inTransaction) lock.exec('ROLLBACK');
    lock.close();
  }
}

it('advance() waits for the retry of a failed timer claim: the due run has run when it resolves', async () => {
  const nap = workflow('nap', (w) => w.run(async ({ step }) => (await step.sleep('nap', '1m'), 'woke')));
  const t = await createTestEngine({ workflows: [nap], startAt: '2026-03-01T00:00:00Z' });
  open.push(t);
  const { runId } = await t.engine.trigger('nap', {});
  await t.idle();
  expect((await t.engine.runs.get(runId)).status).toBe('sleeping');

  await withClaimFailing(t, () => t.advance('1m'));
  const run = await t.engine.runs.get(runId);
  expect(run.status).toBe('succeeded');
  expect(run.output).toBe('woke');
});

it('after a failed claim, advance() still fires every schedule slot it passes: a restart on the file has nothing to catch up', async () => {
  const tick = workflow('tick', (w) => {
    w.trigger(schedule('0 */6 * * *', { catchUp: 'all' }));
    w.run(async ({ input }) => input.slot as string);
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-claim-retry-'));
  dirs.push(dataDir);
  const t = await createTestEngine({ workflows: [tick], startAt: '2026-03-01T00:00:00Z', dataDir });
  open.push(t);
  await withClaimFailing(t, () => t.advance('6h'));
  await t.advance('1d');
  const fates = async (e: TestEngine) => (await e.engine.runs.list({ workflow: 'tick' })).map((r) => `${r.runId} ${r.status}`).sort();
  const seen = await fates(t);
  // The slots of 06:00 on day 1 up to 06:00 on day 2, each run in this engine.
  expect(seen).toHaveLength(5);
  expect(seen.every((s) => s.endsWith(' succeeded'))).toBe(true);

  const at = t.now();
  await t.close();
  open.length = 0;
  const again = await createTestEngine({ workflows: [tick], startAt: at, dataDir });
  open.push(again);
  expect(await fates(again)).toEqual(seen);
});
