// Retention on Restate (issue 13, docs/data.md): config retention.maxAge is the services'
// workflow and journal retention in Restate, and engine.gc() removes what the engine keeps in
// its own file (outbox rows, signals, old inbox events) of runs Restate holds completed or no
// longer holds; a run Restate still runs is never touched. Real restate-server, real time
// (a short maxAge: Restate has no manual clock).
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';
import { readAdminFile } from '../../src/adapters/restate/server-process.ts';
import { serviceName } from '../../src/adapters/restate/workflow-service.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-retention-'));
let engine: Engine | undefined;
afterAll(async () => {
  await engine?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

const wf = workflow('kept', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    if ((input as { wait?: boolean }).wait) await step.waitForEvent('go');
    return step.do('a', () => 1);
  });
});

const localRows = (): string[] => {
  const db = new Database(join(dir, 'tranquil.db'), { readonly: true });
  try {
    return (db.prepare('SELECT run_id FROM runs').all() as { run_id: string }[]).map((r) => r.run_id);
  } finally {
    db.close();
  }
};

it('maxAge is Restate\'s retention of the services; gc removes the engine\'s rows of finished runs only', async () => {
  engine = await createEngine({ backend: 'restate', dataDir: dir, workflows: [wf], retention: { maxAge: '2s' } });
  await engine.start();
  const admin = readAdminFile(dir)!;
  const svc = (await (await fetch(`${admin.adminUrl}/services/${serviceName('kept')}`)).json()) as Record<string, unknown>;
  expect(JSON.stringify(svc)).toMatch(/"workflow_completion_retention":"2s"/);

  const done = (await engine.trigger('kept', {})).runId;
  await engine.result(done, { timeout: '30s' });
  const live = (await engine.trigger('kept', { wait: true })).runId;
  await engine.emit('nobody.listens', { n: 1 });
  await new Promise((r) => setTimeout(r, 2500));
  expect(localRows().sort()).toEqual([done, live].sort());

  const dry = await engine.gc({ dryRun: true });
  expect(dry.sample.map((s) => s.runId)).toEqual([done]);
  expect(dry.events).toBe(1);
  expect(localRows()).toHaveLength(2);

  const report = await engine.gc();
  expect(report.runs).toBe(1);
  expect(report.events).toBe(1);
  expect(localRows()).toEqual([live]);
  await engine.signal(live, 'go', null);
  expect((await engine.result(live, { timeout: '30s' })).status).toBe('succeeded');
}, 60_000);
