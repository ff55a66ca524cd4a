// Switching a data dir from SQLite to Restate: while the file holds runs the SQLite backend
// started and has not finished, a Restate engine refuses to start (one line naming them and
// what to do) instead of stranding them; once they finished on SQLite, the switch goes through
// and new runs run on Restate. A real SQLite file and a real restate-server.
import { mkdtempSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';
import { removeDataDir } from './data-dir.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-switch-'));
const open: Engine[] = [];
afterAll(async () => {
  for (const e of open) await e.stop().catch(() => {});
  removeDataDir(dir);
}, 30_000);

const napper = workflow('napper', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    await step.sleep('nap', (input as { ms: number }).ms);
    return step.do('after', () => 'woke');
  });
});

async function engineOn(backend: 'sqlite' | 'restate'): Promise<Engine> {
  const e = await createEngine({ backend, dataDir: dir, workflows: [napper] });
  open.push(e);
  await e.start();
  return e;
}

it('refuses Restate while SQLite runs are in flight, then switches once they finished', async () => {
  const sqlite = await engineOn('sqlite');
  await sqlite.trigger('napper', { ms: 1500 }, { runId: 'old-1' });
  for (let i = 0; i < 200 && (await sqlite.runs.get('old-1')).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 10));
  expect((await sqlite.runs.get('old-1')).status).toBe('sleeping');
  await sqlite.stop();

  const refused = await createEngine({ backend: 'restate', dataDir: dir, workflows: [napper] });
  const err = await refused.start().then(() => undefined, (e: Error) => e);
  expect(err?.name).toBe('EngineStateError');
  expect(err?.message).toMatch(/^backend 'restate': 1 run\(s\) started on the SQLite backend have not finished in .*: old-1 \(sleeping\); finish them on backend 'sqlite' first/);
  expect(err?.message.split('\n')).toHaveLength(1);
  // Refused before anything was started: no restate-server under the data dir.
  expect(existsSync(join(dir, 'restate', 'server.pid'))).toBe(false);

  const again = await engineOn('sqlite');
  expect(await again.result('old-1', { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'woke' });
  await again.stop();

  const restate = await engineOn('restate');
  const { runId } = await restate.trigger('napper', { ms: 10 });
  expect(await restate.result(runId, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'woke' });
  await restate.stop();
  // A Restate engine's own forwarded runs do not count as SQLite runs in flight.
  const more = await engineOn('restate');
  expect(more.backend).toBe('restate');
}, 120_000);
