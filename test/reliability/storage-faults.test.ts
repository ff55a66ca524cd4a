// Storage faults on real SQLite files: a second connection holding the write lock
// (SQLITE_BUSY), a full disk (SQLITE_FULL: SQLite's own page limit, and a real size-limited
// tmpfs when this process may mount one), and damaged database files. The engine waits out
// a short lock, fails a call cleanly with a StorageError when it cannot write, never turns
// a storage failure into a failed run, never acknowledges a write it lost, carries on once
// the fault clears; and refuses a damaged file with one line, leaving its bytes untouched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, StorageError, type Engine } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';

const dirs: string[] = [];
const engines: Engine[] = [];
const children = new Set<ChildProcess>();
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop().catch(() => {});
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-storage-'));
  dirs.push(d);
  return d;
};

/** Three steps with a real pause between them, so a fault can land mid-run. */
const steady = workflow('steady', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => `a:${JSON.stringify(input)}`);
    await step.sleep('pause', 30);
    const b = await step.do('b', () => 'b'.repeat(Number((input as { size?: number })?.size ?? 10)));
    await step.sleep('pause', 30);
    const c = await step.do('c', () => 'c');
    return { a, b: b.length, c };
  });
});

async function boot(dataDir: string): Promise<Engine> {
  const e = await createEngine({ dataDir, workflows: [steady] });
  await e.start();
  engines.push(e);
  return e;
}

/** The engine's own connection: fault injection reaches the real handle. */
const connection = (e: Engine) => (e.executor as unknown as { store: { db: Database.Database } }).store.db;

/** A second process takes the write lock (BEGIN IMMEDIATE) and holds it for `ms`. */
async function holdWriteLock(dbFile: string, ms: number): Promise<{ released: Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['-e', `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))}); const db = new D(${JSON.stringify(dbFile)});
db.pragma('busy_timeout = 2000'); db.exec('BEGIN IMMEDIATE'); console.log('LOCKED');
setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});`],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_EXTRA_CA_CERTS: '' } },
  );
  children.add(child);
  await new Promise<void>((r) => child.stdout!.on('data', (d) => String(d).includes('LOCKED') && r()));
  // Wrapped: an async function returning a bare promise would make the caller wait for it.
  return { released: new Promise<void>((r) => child.on('exit', () => (children.delete(child), r()))) };
}

async function settle(e: Engine, timeoutMs = 15_000): Promise<Record<string, number>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const views = await e.runs.list({ limit: 10_000 });
    const by: Record<string, number> = {};
    for (const v of views) by[v.status] = (by[v.status] ?? 0) + 1;
    if (views.every((v) => ['succeeded', 'failed', 'cancelled'].includes(v.status)) || Date.now() > end) return by;
    await sleep(20);
  }
}

function integrity(dbFile: string): string {
  const db = new Database(dbFile, { readonly: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

describe('SQLITE_BUSY: another connection holds the write lock', () => {
  it('a short lock is waited out (busy_timeout): the call succeeds once it is released', async () => {
    const dir = newDir();
    const e = await boot(dir);
    const { released } = await holdWriteLock(join(dir, 'tranquil.db'), 400);
    const { runId, created } = await e.trigger('steady', { n: 1 });
    expect(created).toBe(true);
    await released;
    expect((await e.result(runId, { timeout: '10s' })).status).toBe('succeeded');
  });

  it('a lock held past busy_timeout fails the call with a StorageError and stores nothing; then work resumes', async () => {
    const dir = newDir();
    const e = await boot(dir);
    connection(e).pragma('busy_timeout = 150'); // injected: keep the wait short in CI
    const { released } = await holdWriteLock(join(dir, 'tranquil.db'), 1500);
    const err = await e.trigger('steady', {}, { runId: 'while-locked' }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as Error).message).toMatch(/locked/);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    await released;
    await expect(e.runs.get('while-locked')).rejects.toThrow(/unknown run/);
    const again = await e.trigger('steady', {}, { runId: 'while-locked' });
    expect(again.created).toBe(true);
    expect((await e.result('while-locked', { timeout: '10s' })).status).toBe('succeeded');
  });

  it('a lock held while runs are mid-flight does not fail them: they finish once it is released', async () => {
    const dir = newDir();
    const e = await boot(dir);
    connection(e).pragma('busy_timeout = 100');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await e.trigger('steady', { i })).runId);
    await sleep(15); // first steps recorded, runs sleeping or about to write
    const { released } = await holdWriteLock(join(dir, 'tranquil.db'), 1200);
    await released;
    const by = await settle(e);
    expect(by).toEqual({ succeeded: 10 });
    expect(integrity(join(dir, 'tranquil.db'))).toBe('ok');
  });
});

/** The disk-full scenario, parameterised by how space runs out and comes back. */
async function diskFull(e: Engine, dbFile: string, fill: () => void, free: () => void): Promise<void> {
  const acked: string[] = [];
  for (let i = 0; i < 5; i++) acked.push((await e.trigger('steady', { i, size: 2000 })).runId);
  fill();
  const errors: unknown[] = [];
  for (let i = 5; i < 60; i++) {
    try {
      acked.push((await e.trigger('steady', { i, size: 2000, pad: 'p'.repeat(3000) })).runId);
    } catch (err) {
      errors.push(err);
    }
  }
  expect(errors.length).toBeGreaterThan(0);
  for (const err of errors) {
    expect(err).toBeInstanceOf(StorageError);
    expect((err as Error).message).toMatch(/full/);
  }
  await sleep(200);
  // Nothing failed because of the full disk.
  expect((await e.runs.list({ status: 'failed' })).map((v) => v.error)).toEqual([]);
  free();
  const by = await settle(e, 20_000);
  expect(by).toEqual({ succeeded: acked.length });
  for (const id of acked) expect((await e.runs.get(id)).status).toBe('succeeded');
  expect(integrity(dbFile)).toBe('ok');
}

describe('disk full', () => {
  it("SQLITE_FULL from SQLite's page limit: calls fail cleanly, runs wait, everything finishes once space is back", async () => {
    const dir = newDir();
    const e = await boot(dir);
    const db = connection(e);
    await diskFull(
      e,
      join(dir, 'tranquil.db'),
      () => db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 2}`),
      () => db.pragma('max_page_count = 1073741823'),
    );
  });

  // A real ENOSPC: a 3 MiB tmpfs holds the data dir; a filler file takes the free space.
  // Mounted inside the test and unmounted in its finally (a filtered run leaves nothing mounted);
  // whether this process may mount at all is probed once, at collection.
  const canMount = (() => {
    const probe = mkdtempSync(join(tmpdir(), 'tranquil-tmpfs-probe-'));
    const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]).status === 0;
    if (ok) spawnSync('umount', [probe]);
    rmSync(probe, { recursive: true, force: true });
    return ok;
  })();
  const enospc = 'ENOSPC on a 3 MiB tmpfs: the same, with the file system out of space';
  it.skipIf(!canMount)(canMount ? enospc : `${enospc} [skipped: mounting a tmpfs needs root]`, async () => {
    const mnt = mkdtempSync(join(tmpdir(), 'tranquil-tmpfs-'));
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m,mode=0700', 'tmpfs', mnt]).status).toBe(0);
    try {
      const dir = join(mnt, 'data');
      mkdirSync(dir);
      const e = await boot(dir);
      const filler = join(mnt, 'filler');
      await diskFull(
        e,
        join(dir, 'tranquil.db'),
        () => {
          // Fill what is left, leaving a few KiB so the next WAL frames run out of room.
          const free = Number(spawnSync('df', ['-B1', '--output=avail', mnt]).stdout.toString().trim().split('\n')[1]);
          writeFileSync(filler, Buffer.alloc(Math.max(0, free - 16 * 1024)));
        },
        () => rmSync(filler),
      );
      await engines.pop()?.stop();
    } finally {
      spawnSync('umount', [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});

it('a clean stop marks the file as left; the next start consumes the mark, and a crash leaves none', async () => {
  const dir = newDir();
  const file = join(dir, 'tranquil.db');
  const e = await boot(dir);
  expect((await e.result((await e.trigger('steady', {})).runId, { timeout: '10s' })).status).toBe('succeeded');
  await e.stop();
  expect(existsSync(`${file}.clean`)).toBe(true);
  const again = await boot(dir);
  expect(existsSync(`${file}.clean`)).toBe(false);
  expect((await again.result((await again.trigger('steady', {})).runId, { timeout: '10s' })).status).toBe('succeeded');
  // A process that dies without stop(): no mark, so the next start checks the whole file.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `
    import { createEngine } from '@tranquil/engine';
    const e = await createEngine({ dataDir: ${JSON.stringify(join(dir, 'other'))}, workflows: [] });
    await e.start();
    process.kill(process.pid, 'SIGKILL');`], { cwd: process.cwd(), encoding: 'utf8' });
  expect(child.signal).toBe('SIGKILL');
  expect(existsSync(join(dir, 'other', 'tranquil.db'))).toBe(true);
  expect(existsSync(join(dir, 'other', 'tranquil.db.clean'))).toBe(false);
});

describe('a damaged database file: the engine refuses to start and touches nothing', () => {
  const damages: [string, (file: string) => void][] = [
    ['truncated to half', (f) => truncateSync(f, Math.floor(statSync(f).size / 2))],
    ['truncated to its first page', (f) => truncateSync(f, 4096)],
    ['header overwritten', (f) => {
      const b = readFileSync(f);
      b.fill(0x41, 0, 100);
      writeFileSync(f, b);
    }],
    ['a b-tree page zeroed', (f) => {
      const b = readFileSync(f);
      b.fill(0, 4096, 8192);
      writeFileSync(f, b);
    }],
  ];
  for (const [what, damage] of damages) {
    it(what, async () => {
      const dir = newDir();
      const e = await boot(dir);
      const ids = await Promise.all(Array.from({ length: 40 }, async (_, i) => (await e.trigger('steady', { i, size: 3000 })).runId));
      await Promise.all(ids.map((id) => e.result(id, { timeout: '10s' })));
      await e.stop();
      const file = join(dir, 'tranquil.db');
      expect(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0).toBe(0); // checkpointed at close
      // A clean stop lets the next start skip the whole-file check, unless the file changed since.
      expect(existsSync(`${file}.clean`)).toBe(true);
      damage(file);
      const before = readFileSync(file);
      const again = await createEngine({ dataDir: dir, workflows: [steady] });
      const err = await again.start().catch((x: unknown) => x);
      expect(err).toBeInstanceOf(StorageError);
      expect((err as Error).message).toMatch(/damaged.*left untouched/);
      expect((err as Error).message.split('\n')).toHaveLength(1);
      expect(Buffer.compare(readFileSync(file), before)).toBe(0);
      expect(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0).toBe(0);
    });
  }
});
