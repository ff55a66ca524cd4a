// The drain from SQLite to Restate (docs/restate.md, "Switching a data dir from SQLite"): a
// data dir whose file holds runs the SQLite backend started and has not finished switches to
// Restate at once. Those runs keep executing on the file to the end (across a restart of the
// Restate engine too) while every new run starts on Restate; runs.list, why and result()
// answer for both and say which backend holds a run; the CLI's reader agrees. A real SQLite
// file and a real restate-server.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { event, manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';
import { resolveConfig } from '../../compose/config.ts';
import { openRunReader } from '../../compose/run-reader.ts';
import { removeDataDir } from './data-dir.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-drain-'));
const open: Engine[] = [];
afterAll(async () => {
  for (const e of open) await e.stop().catch(() => {});
  removeDataDir(dir);
}, 30_000);

/** Every body execution, by run and step: a step that ran twice would show it. */
const executed: string[] = [];

const napper = workflow('napper', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input, ctx }) => {
    await step.do('before', () => executed.push(`${ctx.runId}:before`));
    await step.sleep('nap', (input as { ms: number }).ms);
    return step.do('after', () => (executed.push(`${ctx.runId}:after`), 'woke'));
  });
});

const waiter = workflow('waiter', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => ({ got: await step.waitForEvent('go') }));
});

const emitter = workflow('emitter', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.sleep('nap', 1500);
    await ctx.emit('drain.done', { from: ctx.runId });
    return 'emitted';
  });
});

const listener = workflow('listener', (w) => {
  w.trigger(event('drain.done'));
  w.run(async ({ input }) => input);
});

const workflows = [napper, waiter, emitter, listener];

async function engineOn(backend: 'sqlite' | 'restate'): Promise<Engine> {
  const e = await createEngine({ backend, dataDir: dir, workflows });
  open.push(e);
  await e.start();
  return e;
}

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

it('keeps SQLite runs in flight running on the file to the end while new runs start on Restate', async () => {
  const sqlite = await engineOn('sqlite');
  await sqlite.trigger('napper', { ms: 0 }, { runId: 'old-done' });
  expect(await sqlite.result('old-done', { timeout: '30s' })).toMatchObject({ status: 'succeeded' });
  await sqlite.trigger('napper', { ms: 2500 }, { runId: 'old-nap' });
  // Long enough to be still asleep through the checks and the restart below, also on a loaded machine.
  await sqlite.trigger('napper', { ms: 12_000 }, { runId: 'old-long' });
  await sqlite.trigger('waiter', null, { runId: 'old-wait' });
  await sqlite.trigger('emitter', null, { runId: 'old-emit' });
  await until('the SQLite runs to suspend', async () => {
    const statuses = await Promise.all(['old-nap', 'old-long', 'old-wait', 'old-emit'].map(async (id) => (await sqlite.runs.get(id)).status));
    return statuses.join() === 'sleeping,sleeping,waiting,sleeping';
  });
  await sqlite.stop();

  // The switch: the Restate engine starts on the same data dir without refusing.
  const restate = await engineOn('restate');
  expect(restate.backend).toBe('restate');
  const { runId: fresh } = await restate.trigger('napper', { ms: 10 });
  const list = await restate.runs.list({ limit: 100 });
  const by = Object.fromEntries(list.map((r) => [r.runId, r.heldBy]));
  expect(by).toMatchObject({ 'old-nap': 'sqlite', 'old-long': 'sqlite', 'old-wait': 'sqlite', 'old-emit': 'sqlite', [fresh]: 'restate' });
  // Runs that finished before the switch are not part of the drain (TRANQUIL_BACKEND=sqlite reads them).
  expect(by['old-done']).toBeUndefined();
  expect((await restate.runs.get('old-wait')).status).toBe('waiting');
  const why = await restate.runs.explain('old-wait');
  expect(why.summary).toContain('held by the SQLite backend of this data dir');
  expect((await restate.runs.explain(fresh)).summary).not.toContain('SQLite');

  // A signal reaches the drained run; result() answers for both kinds.
  await restate.signal('old-wait', 'go', { ok: 1 });
  expect(await restate.result('old-wait', { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: { got: { ok: 1 } }, heldBy: 'sqlite' });
  expect(await restate.result(fresh, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'woke', heldBy: 'restate' });
  expect(await restate.result('old-nap', { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'woke' });
  // The event a drained run emitted started its subscriber on Restate, once.
  expect(await restate.result('old-emit', { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'emitted' });
  await until('the listener run', async () => (await restate.runs.list({ workflow: 'listener' })).length > 0);
  const listeners = await restate.runs.list({ workflow: 'listener' });
  expect(listeners).toHaveLength(1);
  expect(listeners[0]!.heldBy).toBe('restate');
  expect(await restate.result(listeners[0]!.runId, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: { from: 'old-emit' } });

  // The CLI's reader (another process's view of the data dir) agrees.
  const reader = (await openRunReader(resolveConfig({ backend: 'restate', dataDir: dir })))!;
  try {
    const page = await reader.listRuns({ limit: 100 });
    const cli = Object.fromEntries(page.runs.map((r) => [r.runId, [r.heldBy, r.status]]));
    expect(cli).toMatchObject({ 'old-long': ['sqlite', 'sleeping'], 'old-wait': ['sqlite', 'succeeded'], [fresh]: ['restate', 'succeeded'] });
    expect((await reader.getRun('old-long'))?.heldBy).toBe('sqlite');
  } finally {
    await reader.close();
  }

  // A restart mid-drain: the long nap is still drained, and finishes on the file.
  expect((await restate.runs.get('old-long')).status).toBe('sleeping');
  await restate.stop();
  const again = await engineOn('restate');
  expect((await again.runs.get('old-long')).heldBy).toBe('sqlite');
  expect((await again.runs.get(fresh)).heldBy).toBe('restate');
  expect(await again.result('old-long', { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'woke', heldBy: 'sqlite' });
  // New runs keep going to Restate.
  const { runId: later } = await again.trigger('napper', { ms: 10 });
  expect(await again.result(later, { timeout: '30s' })).toMatchObject({ status: 'succeeded', heldBy: 'restate' });
  // Every step body of the drained runs ran once: no run was executed by both backends.
  for (const id of ['old-nap', 'old-long']) {
    expect(executed.filter((e) => e === `${id}:before`)).toHaveLength(1);
    expect(executed.filter((e) => e === `${id}:after`)).toHaveLength(1);
  }
}, 180_000);

it('takes a new trigger with a drained run id as the same run (the id dedups across the drain)', async () => {
  const e = open.at(-1)!;
  const before = await e.runs.get('old-nap');
  expect(await e.trigger('napper', { ms: 0 }, { runId: 'old-nap' })).toEqual({ runId: 'old-nap', created: false });
  const after = await e.runs.get('old-nap');
  expect(after).toMatchObject({ status: 'succeeded', heldBy: 'sqlite', updatedAt: before.updatedAt });
}, 60_000);
