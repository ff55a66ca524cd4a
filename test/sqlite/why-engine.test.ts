// `tranquil why` on a data dir whose engine is gone (issue 15): the CLI reads the file's owner
// row and says so. A clean stop leaves no owner: a pending run reads "pending because no engine
// is running". A crashed engine leaves its row with a dead pid: a running run reads "held by
// an engine that stopped answering". The crash is injected by writing the row an engine that
// died mid-run leaves (a real SQLite file, the real CLI in a child process).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type Explanation } from '@tranquil/engine';
import { DB_FILE, SqliteStore } from '../../src/adapters/sqlite/store.ts';
import { tranquilCli } from '../cli-bin.ts';

const BIN = tranquilCli();

function why(dataDir: string, runId: string): Promise<Explanation> {
  const env: NodeJS.ProcessEnv = { ...process.env, TRANQUIL_BACKEND: 'sqlite' };
  delete env.TRANQUIL_DATA_DIR;
  const child = spawn(process.execPath, [BIN, 'why', runId, '--json', '--data-dir', dataDir], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((res, rej) => child.once('close', (code) => (code === 0 ? res(JSON.parse(out) as Explanation) : rej(new Error(`why exited ${code}: ${err}`)))));
}

describe('tranquil why with no engine on the data dir', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a pending run after a clean stop, and a running run held by an engine that died', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-why-'));
    dirs.push(dir);
    const hang = workflow('hangs', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('first', () => 1);
        await step.do('stuck', ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))));
      });
    });
    const engine = await createEngine({ backend: 'sqlite', dataDir: dir, workflows: [hang] });
    await engine.start();
    const { runId: running } = await engine.trigger('hangs', null);
    for (let i = 0; i < 400 && !(await engine.runs.get(running)).steps.some((s) => s.name === 'first' && s.status === 'succeeded'); i++) await new Promise((r) => setTimeout(r, 10));
    const version = (await engine.runs.get(running)).version;
    await engine.stop();

    // What a trigger writes first, with no engine left to pick it up.
    const db = new Database(join(dir, DB_FILE));
    new SqliteStore(db).insertRun({ runId: 'queued-1', workflow: 'hangs', version, input: null, now: Date.parse('2026-11-30T10:00:00.000Z') });
    const pending = await why(dir, 'queued-1');
    expect(pending.summary).toBe(
      `Run queued-1 of workflow 'hangs' (version ${version}) is pending because no engine is running on this data dir (created at 2026-11-30T10:00:00.000Z). ` +
        'The next engine to start picks it up, and catches up every timer and schedule slot that came due while none ran.',
    );
    expect(pending.next).toBe('Start one: `tranquil serve` (or the app that embeds the engine).');

    // The owner row of an engine that died: its pid is gone.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    db.prepare(`UPDATE runs SET status = 'running' WHERE run_id = ?`).run(running);
    db.prepare(`INSERT INTO owner (id, owner_id, pid, host, heartbeat_at) VALUES (1, 'crashed', ?, ?, ?)`).run(dead, hostname(), Date.now() - 5_000);
    db.close();
    const held = await why(dir, running);
    expect(held.summary).toMatch(
      new RegExp(`^Run ${running} of workflow 'hangs' \\(version ${version}\\) is running, held by an engine that stopped answering \\(pid ${dead} on ${hostname()}, last heartbeat at \\S+ \\(\\d+s ago\\)\\)\\. ` +
        `The next engine to start on this data dir takes it over and resumes the run from its last recorded step 'first' \\(succeeded\\)\\.$`),
    );
    expect(held.next).toBe(`If pid ${dead} on ${hostname()} is hung, stop it by its pid, then start an engine: \`tranquil serve\`; the run resumes with the same idempotency keys.`);
  }, 60_000);
});
