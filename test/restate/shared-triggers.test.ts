// `restate.triggers: 'restate'` (event inbox, schedules + slot ledger, webhook secrets as
// Restate virtual objects: src/adapters/restate/cluster-triggers.ts) passes the same trigger
// scenarios as the local trigger store, on a real embedded restate-server. Two replicas in
// one cluster are covered by test/cluster/cluster.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { schedule, workflow, type WorkflowDefinition } from '@tranquil/sdk';
import { triggerScenarios } from '../conformance/triggers.ts';
import { removeDataDir } from './data-dir.ts';

const LONG = process.env.TRANQUIL_RESTATE_LONG === '1';

describe('triggers kept in Restate', () => {
  const open: Engine[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const e of open.splice(0)) await e.stop().catch(() => {});
    for (const d of dirs.splice(0)) removeDataDir(d);
  });
  async function boot(workflows: WorkflowDefinition[], dataDir?: string) {
    const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'tranquil-rs-shared-'));
    if (!dataDir) dirs.push(dir);
    const engine = await createEngine({ backend: 'restate', dataDir: dir, workflows, restate: { triggers: 'restate' } });
    await engine.start();
    open.push(engine);
    return { engine, dir };
  }
  const restart = async (engine: Engine, workflows: WorkflowDefinition[], dir: string) => (await engine.stop(), (await boot(workflows, dir)).engine);
  const until = async (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
    const end = Date.now() + timeoutMs;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // The shared scenarios each boot a server: with TRANQUIL_RESTATE_LONG=1. In `npm test` the
  // test below runs here, and test/cluster/cluster.test.ts covers event dedup and one fire per
  // slot across two replicas.
  const test = (name: string, fn: () => Promise<void>, timeout = 30_000) =>
    LONG ? it(name, fn, timeout) : it.skip(`${name} [skipped: runs with TRANQUIL_RESTATE_LONG=1]`, fn);
  triggerScenarios({ test, boot, restart, until });

  it('nothing of the triggers is in the local file: its events and schedules tables stay empty', async () => {
    const wf = workflow('ticker', (w) => {
      w.trigger(schedule('* * * * * *'));
      w.run(async ({ input }) => input);
    });
    const { engine, dir } = await boot([wf]);
    await engine.emit('x', null, { id: 'e-local' });
    await until('a fired slot', async () => (await engine.schedules.slots({ fate: 'fired' })).length >= 1);
    // The CLI reads them where the engine keeps them (compose/trigger-reader.ts).
    writeFileSync(join(dir, 'tranquil.config.mjs'), `export default { backend: 'restate', restate: { triggers: 'restate' } };\n`);
    const cli = (...args: string[]) => {
      const env = { ...process.env };
      delete env.TRANQUIL_BACKEND;
      delete env.TRANQUIL_DATA_DIR;
      const r = spawnSync(process.execPath, [join(import.meta.dirname, '../../bin/tranquil.mjs'), ...args, '--data-dir', dir], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    expect((JSON.parse(cli('events', 'list', '--json')) as { id: string }[]).map((e) => e.id)).toEqual(['e-local']);
    expect(cli('why', 'ticker')).toMatch(/fired on time/);
    await engine.stop();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, 'tranquil.db'), { readonly: true });
    try {
      for (const table of ['events', 'schedules', 'schedule_slots', 'webhook_secrets']) {
        expect((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n, table).toBe(0);
      }
    } finally {
      db.close();
    }
  }, 30_000);
});
