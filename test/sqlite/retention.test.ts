// Retention on SQLite (issue 13, docs/data.md), with the testing kit's manual clock for ages:
// finished runs older than retention.maxAge go with their journal, signals and old inbox
// events; live runs and younger runs stay; `dryRun` removes nothing; the file gives its pages
// back (auto_vacuum = INCREMENTAL, also after upgrading a file made before schema 6); and a
// sweep of many batches lets a live run's commits through between its batches.
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { migrate } from '../../src/adapters/sqlite/schema.ts';
import { tranquilCli } from '../cli-bin.ts';

const open: TestEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const work = workflow('work', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const i = input as { pad?: number; wait?: boolean; fail?: boolean };
    const r = await step.do('a', () => 'x'.repeat(i.pad ?? 10));
    if (i.wait) await step.waitForEvent('go');
    if (i.fail) throw new Error('boom');
    return r.length;
  });
});

async function engine(options: Parameters<typeof createTestEngine>[0] = {}): Promise<TestEngine> {
  const t = await createTestEngine({ workflows: [work], startAt: '2026-01-01T00:00:00Z', ...options });
  open.push(t);
  return t;
}

/** A read-only look at the data dir's file (the engine keeps running). */
function peek<T>(dir: string, sql: string, ...args: unknown[]): T {
  const db = new Database(join(dir, 'tranquil.db'), { readonly: true });
  try {
    return db.prepare(sql).get(...args) as T;
  } finally {
    db.close();
  }
}

describe('retention (SQLite)', () => {
  it('removes finished runs older than maxAge with their journal and signals; live and younger runs stay; dry run removes nothing', async () => {
    const t = await engine({ retention: { maxAge: '30d' } });
    const { engine: e } = t;
    const old = (await e.trigger('work', {})).runId;
    const oldFailed = (await e.trigger('work', { fail: true })).runId;
    const live = (await e.trigger('work', { wait: true })).runId;
    const signalled = (await e.trigger('work', { wait: true })).runId;
    await t.idle();
    await e.signal(signalled, 'go', { n: 1 });
    await t.idle();
    await e.emit('something.old', { n: 1 }, { id: 'evt-old' });
    await t.advance('20d');
    const young = (await e.trigger('work', {})).runId;
    await t.advance('11d'); // old ones finished 31 days ago, young 11 days ago

    const dry = await e.gc({ dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.runs).toBe(3);
    expect(dry.sample.map((r) => r.runId).sort()).toEqual([old, oldFailed, signalled].sort());
    expect(dry.events).toBe(1);
    expect((await e.runs.get(old)).status).toBe('succeeded'); // nothing removed

    const seqOf = (id: string) => peek<{ created_seq: number }>(t.dataDir, 'SELECT created_seq FROM runs WHERE run_id = ?', id).created_seq;
    const oldSeq = seqOf(old);
    const report = await e.gc();
    expect(report).toMatchObject({ dryRun: false, runs: 3, events: 1 });
    await expect(e.runs.get(old)).rejects.toThrow(/unknown run/);
    await expect(e.runs.get(oldFailed)).rejects.toThrow(/unknown run/);
    expect(peek<{ n: number }>(t.dataDir, 'SELECT count(*) AS n FROM steps WHERE run_seq = ?', oldSeq).n).toBe(0);
    expect(peek<{ n: number }>(t.dataDir, 'SELECT count(*) AS n FROM signals WHERE run_id = ?', signalled).n).toBe(0);
    expect((await e.events.list()).length).toBe(0);
    expect((await e.runs.get(young)).status).toBe('succeeded');
    expect((await e.runs.get(live)).status).toBe('waiting'); // 31 days old, but live
    await e.signal(live, 'go', null);
    expect((await e.result(live, { timeout: '10s' })).status).toBe('succeeded');
    expect((await e.gc()).runs).toBe(0); // the live run just finished: not old yet
  });

  it('gives the freed pages back to the file system (incremental vacuum)', async () => {
    const t = await engine({ retention: { maxAge: '1d', batchSize: 20 } });
    for (let i = 0; i < 60; i++) await t.engine.trigger('work', { pad: 20_000 });
    await t.idle();
    const pages = () => peek<{ page_count: number }>(t.dataDir, 'PRAGMA page_count').page_count;
    const before = pages();
    await t.advance('2d');
    const report = await t.engine.gc();
    expect(report.runs).toBe(60);
    expect(report.batches).toBe(3);
    expect(report.pagesReclaimed).toBeGreaterThan(0);
    expect(pages()).toBeLessThan(before / 2);
    expect(peek<{ freelist_count: number }>(t.dataDir, 'PRAGMA freelist_count').freelist_count).toBe(0);
  });

  it('a file from before schema 6 is switched to incremental auto-vacuum once, its runs intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-retention-'));
    dirs.push(dir);
    const db = new Database(join(dir, 'tranquil.db'));
    db.pragma('journal_mode = WAL');
    migrate(db, 5);
    db.pragma('auto_vacuum = NONE');
    db.exec('VACUUM');
    db.prepare(`INSERT INTO runs (run_id, workflow, version, status, input, created_at, updated_at, created_seq) VALUES ('r-old', 'work', 'v0', 'succeeded', '{"k":1}', 0, 0, 1)`).run();
    expect(db.pragma('auto_vacuum', { simple: true })).toBe(0);
    db.close();
    const t = await engine({ dataDir: dir });
    expect(peek<{ auto_vacuum: number }>(dir, 'PRAGMA auto_vacuum').auto_vacuum).toBe(2);
    expect(peek<{ user_version: number }>(dir, 'PRAGMA user_version').user_version).toBeGreaterThanOrEqual(6);
    expect((await t.engine.runs.get('r-old')).input).toEqual({ k: 1 });
  });

  it('a sweep of many batches lets a live run commit between its batches', async () => {
    const t = await engine({ retention: { maxAge: '1d', batchSize: 25 } });
    const total = 400;
    for (let i = 0; i < total; i++) await t.engine.trigger('work', {});
    await t.idle();
    await t.advance('2d');
    const sweep = t.engine.gc();
    // A run that needs several commits (created, step recorded, finished) while the sweep runs.
    const { runId } = await t.engine.trigger('work', {});
    await t.engine.result(runId, { timeout: '30s' });
    const left = peek<{ n: number }>(t.dataDir, `SELECT count(*) AS n FROM runs WHERE status = 'succeeded'`).n - 1;
    const report = await sweep;
    expect(report.runs).toBe(total);
    expect(report.batches).toBeGreaterThanOrEqual(total / 25);
    // Each of the live run's commits waited for at most one batch: most old runs were still
    // there when it finished (had it waited for the sweep, none would be).
    expect(left).toBeGreaterThan(total - 6 * 25);
  });

  it('`tranquil gc --dry-run` lists what would go from the file, read-only, while nothing runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-retention-cli-'));
    dirs.push(dir);
    // Real time for the CLI: runs that finished 40 and 10 days before now.
    const t = await engine({ dataDir: dir, startAt: Date.now() - 40 * 86_400_000 });
    const old = (await t.engine.trigger('work', {})).runId;
    await t.idle();
    await t.advance('30d');
    await t.engine.trigger('work', {});
    await t.idle();
    await t.close();
    const bin = tranquilCli();
    const env = { ...process.env, TRANQUIL_BACKEND: 'sqlite' };
    const run = (...args: string[]) => spawnSync(process.execPath, [bin, 'gc', '--dry-run', '--data-dir', dir, ...args], { cwd: dir, env, encoding: 'utf8' });
    const r = run('--json');
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { dryRun: boolean; runs: number; sample: { runId: string }[] };
    expect(report.dryRun).toBe(true);
    expect(report.runs).toBe(1);
    expect(report.sample.map((x) => x.runId)).toEqual([old]);
    // Nothing was removed.
    expect(peek<{ n: number }>(dir, 'SELECT count(*) AS n FROM runs').n).toBe(2);
  });
});
