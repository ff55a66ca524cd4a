// A data dir written by the previous schema (v2: steps keyed by text run_id) is upgraded in
// place on start: finished runs keep their journal, and a run asleep at the upgrade wakes
// and finishes from its recorded steps (no recorded step body runs again).
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, queue, workflow } from '@tranquil/sdk';
import { MIGRATIONS } from '../../src/adapters/sqlite/schema.ts';

const dirs: string[] = [];
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const calls = { a: 0, b: 0 };
const napper = workflow('napper', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => (calls.a++, `A:${JSON.stringify(input)}`));
    if ((input as { nap?: boolean }).nap) await step.sleep('pause', 400);
    const b = await step.do('b', () => (calls.b++, 'B'));
    return { a, b };
  });
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-upgrade-'));
  dirs.push(dir);
  return dir;
}

async function boot(dataDir: string): Promise<Engine> {
  const e = await createEngine({ dataDir, workflows: [napper] });
  await e.start();
  engines.push(e);
  return e;
}

/** Undoes migration 13 (debounce, issue 39): its table. */
function dropDebounce(db: Database.Database): void {
  db.exec(`DROP TABLE debounce_pending;`);
}

/** Undoes migrations 13 and 12 (flow control, issue 39): their tables and indexes. */
function dropQueues(db: Database.Database): void {
  dropDebounce(db);
  db.exec(`DROP TABLE queue_defs; DROP TABLE queue_waiting; DROP TABLE queue_slots; DROP TABLE queue_starts;`);
}

/** Undoes migration 17 (debounce of triggers, issue 39): its table and the bursts' count. */
function dropBurstTriggers(db: Database.Database): void {
  db.exec(`DROP TABLE IF EXISTS debounce_triggers;`);
  const count = db.prepare(`SELECT 1 FROM pragma_table_info('debounce_pending') WHERE name = 'count'`).get();
  if (count) db.exec(`ALTER TABLE debounce_pending DROP COLUMN count;`);
}

/** Undoes migrations 17 and 16 (runs listed by workflow, issue 44): its indexes. */
function dropWorkflowIndexes(db: Database.Database): void {
  dropBurstTriggers(db);
  db.exec(`DROP INDEX runs_workflow; DROP INDEX runs_workflow_status;`);
}

/** Undoes migrations 16 and 15 (workflows.pause, issue 41): its table and column. */
function dropWorkflowPause(db: Database.Database): void {
  dropWorkflowIndexes(db);
  db.exec(`DROP TABLE workflow_pauses; ALTER TABLE runs DROP COLUMN pause_held;`);
}

/** Undoes migrations 16 to 14 (runs.fork, issue 41): its columns. */
function dropFork(db: Database.Database): void {
  dropWorkflowPause(db);
  db.exec(`ALTER TABLE runs DROP COLUMN fork_from; ALTER TABLE runs DROP COLUMN fork_steps;`);
}

/** Undoes migration 11 (run control, issue 41): its index and columns. */
function dropRunControl(db: Database.Database): void {
  db.exec(`DROP INDEX runs_rerun_of; ALTER TABLE runs DROP COLUMN deadline_at; ALTER TABLE runs DROP COLUMN rerun_of;
           ALTER TABLE runs DROP COLUMN pause_by; ALTER TABLE runs DROP COLUMN pause_at;`);
}

/** Rewrites the file into schema v2's steps layout, exactly as MIGRATIONS[0..1] define it. */
function downgradeToV2(file: string): void {
  const db = new Database(file);
  try {
    db.transaction(() => {
      const rows = db.prepare(`SELECT * FROM steps`).all() as Record<string, unknown>[];
      db.exec(`DROP TABLE steps; DROP INDEX runs_seq; CREATE INDEX runs_newest ON runs (created_seq DESC);`);
      // Tables of later migrations (5: workflow files) did not exist in v2.
      db.exec(`DROP TABLE workflow_approvals; DROP TABLE run_output;`);
      // Indexes of migration 6 (retention) did not exist in v2 either.
      db.exec(`DROP INDEX runs_finished; DROP INDEX signals_run; DROP INDEX events_created;`);
      // Table of migration 7 (the drain) and columns of migration 8 (who asked to cancel; the
      // steps table is rebuilt below).
      db.exec(`DROP TABLE drain_runs;`);
      // Table of migration 9 (child runs' links).
      db.exec(`DROP TABLE run_links;`);
      dropFork(db);
      dropQueues(db);
      dropRunControl(db);
      db.exec(`ALTER TABLE runs DROP COLUMN cancel_by; ALTER TABLE runs DROP COLUMN cancel_at;`);
      // Column of migration 10 (the run's trace context).
      db.exec(`ALTER TABLE runs DROP COLUMN trace_parent;`);
      const v2steps = /CREATE TABLE steps \([\s\S]*?\) WITHOUT ROWID;/.exec(MIGRATIONS[0]!)![0];
      db.exec(v2steps);
      const ins = db.prepare(`INSERT INTO steps (run_id, seq, name, kind, status, attempts, result, error, started_at, ended_at, wake_at, next_retry_at)
        VALUES (@run_id, @seq, @name, @kind, @status, @attempts, @result, @error, @started_at, @ended_at, @wake_at, @next_retry_at)`);
      for (const { run_seq: _seq, id: _id, ...r } of rows) ins.run(r);
      // A step row whose run is gone: unreachable by any API, not carried over.
      ins.run({ run_id: 'ghost', seq: 0, name: 'x', kind: 'do', status: 'succeeded', attempts: 1, result: '1', error: null, started_at: 1, ended_at: 1, wake_at: null, next_retry_at: null });
      db.pragma('user_version = 2');
    })();
  } finally {
    db.close();
  }
}

it('a v2 data dir is upgraded on start: journals kept, a sleeping run finishes without re-running recorded steps', async () => {
  const dir = newDir();
  let e = await boot(dir);
  const done = await e.trigger('napper', { n: 1 });
  expect((await e.result(done.runId)).status).toBe('succeeded');
  const nap = await e.trigger('napper', { nap: true });
  for (let i = 0; i < 100 && (await e.runs.get(nap.runId)).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 10));
  expect((await e.runs.get(nap.runId)).status).toBe('sleeping');
  const before = { done: await e.runs.get(done.runId), nap: await e.runs.get(nap.runId) };
  await e.stop();
  engines.splice(0);
  downgradeToV2(join(dir, 'tranquil.db'));

  const callsBefore = { ...calls };
  e = await boot(dir);
  expect(await e.runs.get(done.runId)).toEqual(before.done);
  const finished = await e.result(nap.runId, { timeout: '10s' });
  expect(finished.status).toBe('succeeded');
  expect(finished.output).toEqual({ a: 'A:{"nap":true}', b: 'B' });
  expect(finished.steps.slice(0, 1)).toEqual(before.nap.steps.slice(0, 1));
  expect(calls).toEqual({ a: callsBefore.a, b: callsBefore.b + 1 });
  await e.stop();
  engines.splice(0);

  const db = new Database(join(dir, 'tranquil.db'), { readonly: true });
  try {
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(db.prepare(`SELECT count(*) AS n FROM steps WHERE run_id = 'ghost'`).get()).toEqual({ n: 0 });
    expect(db.prepare(`SELECT count(*) AS n FROM steps`).get()).toEqual({ n: 2 + 3 });
  } finally {
    db.close();
  }
});

it('a v2 file whose runs share a created_seq is upgraded: the later run is renumbered, both journals kept', async () => {
  const dir = newDir();
  let e = await boot(dir);
  const a = await e.trigger('napper', { n: 'a' });
  const b = await e.trigger('napper', { n: 'b' });
  const before = [await e.result(a.runId), await e.result(b.runId)];
  await e.stop();
  engines.splice(0);
  downgradeToV2(join(dir, 'tranquil.db'));
  const db = new Database(join(dir, 'tranquil.db'));
  db.prepare(`UPDATE runs SET created_seq = (SELECT created_seq FROM runs WHERE run_id = ?) WHERE run_id = ?`).run(a.runId, b.runId);
  db.close();

  e = await boot(dir);
  expect([await e.runs.get(a.runId), await e.runs.get(b.runId)]).toEqual(before);
  expect((await e.runs.list({})).map((r) => r.runId).slice(-2)).toEqual([b.runId, a.runId]); // newest first
});

it('a refused start (the data dir has a live owner) leaves an older schema untouched', async () => {
  const dir = newDir();
  const e = await boot(dir);
  await e.result((await e.trigger('napper', { n: 1 })).runId);
  await e.stop();
  engines.splice(0);
  const file = join(dir, 'tranquil.db');
  downgradeToV2(file);
  // An older engine that owns the file right now: this process, heartbeating.
  const db = new Database(file);
  db.prepare(`INSERT INTO owner (id, owner_id, pid, host, heartbeat_at) VALUES (1, 'older-engine', ?, ?, ?)`).run(process.pid, hostname(), Date.now());
  db.close();
  const schemaOf = () => {
    const ro = new Database(file, { readonly: true });
    try {
      return { version: ro.pragma('user_version', { simple: true }), sql: ro.prepare(`SELECT name, sql FROM sqlite_master ORDER BY name`).all() };
    } finally {
      ro.close();
    }
  };
  const before = schemaOf();
  const refused = await createEngine({ dataDir: dir, workflows: [napper] });
  const err = await refused.start().catch((x: unknown) => x);
  expect((err as Error).message).toMatch(/in use by another engine/);
  expect(schemaOf()).toEqual(before);
  expect(before.version).toBe(2);
});

it('a v8 data dir is upgraded to v9 (child links): its runs read as before and a run started after invokes a child', async () => {
  const dir = newDir();
  const kid = workflow('kid', (w) => {
    w.trigger(manual());
    w.run(async ({ input }) => `kid ${String(input)}`);
  });
  const caller = workflow('caller', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.invoke('call', kid, 'x'));
  });
  let e = await createEngine({ dataDir: dir, workflows: [napper, kid, caller] });
  await e.start();
  engines.push(e);
  const old = await e.trigger('napper', { n: 8 });
  const before = await e.result(old.runId);
  await e.stop();
  engines.splice(0);
  const file = join(dir, 'tranquil.db');
  const db = new Database(file);
  db.exec(`DROP TABLE run_links;`);
  dropFork(db);
  dropQueues(db);
  dropRunControl(db);
  db.exec(`ALTER TABLE runs DROP COLUMN trace_parent;`); // migration 10
  db.pragma('user_version = 8');
  db.close();

  e = await createEngine({ dataDir: dir, workflows: [napper, kid, caller] });
  await e.start();
  engines.push(e);
  expect(await e.runs.get(old.runId)).toEqual(before);
  const done = await e.result((await e.trigger('caller', null, { runId: 'c9' })).runId, { timeout: '10s' });
  expect(done.output).toBe('kid x');
  expect((await e.runs.get('c9')).children).toEqual([{ runId: 'c9:call', workflow: 'kid', step: 'call', status: 'succeeded' }]);
});

it('a v11 data dir (before flow control) is upgraded to v12: its runs read as before, a queued step and a queued run go through, the queues are recorded', async () => {
  const dir = newDir();
  const q = queue('upgraded', { concurrency: 1 });
  const solo = queue('solo-run', { concurrency: 1 });
  const limited = workflow('limited', { queues: [q], runs: { queue: solo } }, (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => step.do('call', { queue: 'upgraded', key: String(input) }, () => `called ${String(input)}`));
  });
  let e = await boot(dir);
  const old = await e.trigger('napper', { n: 11 });
  const nap = await e.trigger('napper', { nap: true });
  const before = await e.result(old.runId);
  for (let i = 0; i < 100 && (await e.runs.get(nap.runId)).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 10));
  await e.stop();
  engines.splice(0);
  const file = join(dir, 'tranquil.db');
  const db = new Database(file);
  dropFork(db);
  dropQueues(db);
  db.pragma('user_version = 11');
  db.close();

  e = await createEngine({ dataDir: dir, workflows: [napper, limited] });
  await e.start();
  engines.push(e);
  expect(await e.runs.get(old.runId)).toEqual(before);
  expect((await e.result(nap.runId, { timeout: '10s' })).status).toBe('succeeded');
  const runs = await Promise.all(['a', 'b'].map((k) => e.trigger('limited', k)));
  const outs = await Promise.all(runs.map(async (r) => (await e.result(r.runId, { timeout: '10s' })).output));
  expect(outs).toEqual(['called a', 'called b']);
  await e.stop();
  engines.splice(0);

  const ro = new Database(file, { readonly: true });
  try {
    expect(ro.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(ro.prepare(`SELECT name, limits FROM queue_defs ORDER BY name`).all()).toEqual([{ name: 'solo-run', limits: '{"concurrency":1}' }, { name: 'upgraded', limits: '{"concurrency":1}' }]);
    expect(ro.prepare(`SELECT count(*) AS n FROM queue_slots`).get()).toEqual({ n: 0 });
  } finally {
    ro.close();
  }
});

it('a v12 data dir (before debounce) is upgraded to v13: its runs read as before, a debounced burst becomes one run', async () => {
  const dir = newDir();
  const late = workflow('late', { debounce: { period: 50 } }, (w) => {
    w.trigger(manual());
    w.run(async ({ input }) => input);
  });
  let e = await boot(dir);
  const old = await e.trigger('napper', { n: 12 });
  const before = await e.result(old.runId);
  await e.stop();
  engines.splice(0);
  const file = join(dir, 'tranquil.db');
  const db = new Database(file);
  dropFork(db);
  dropDebounce(db);
  db.pragma('user_version = 12');
  db.close();

  e = await createEngine({ dataDir: dir, workflows: [napper, late] });
  await e.start();
  engines.push(e);
  expect(await e.runs.get(old.runId)).toEqual(before);
  const ids = new Set<string>();
  for (const n of [1, 2, 3]) ids.add((await e.trigger('late', n)).runId);
  expect(ids.size).toBe(1);
  expect((await e.result([...ids][0]!, { timeout: '10s' })).output).toBe(3);
  await e.stop();
  engines.splice(0);
  const ro = new Database(file, { readonly: true });
  try {
    expect(ro.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(ro.prepare(`SELECT count(*) AS n FROM debounce_pending`).get()).toEqual({ n: 0 });
  } finally {
    ro.close();
  }
});
