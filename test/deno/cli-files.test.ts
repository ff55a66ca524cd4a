// `tranquil serve --workflows <dir>` runs the directory's files through the Deno runner (never
// imported into the engine) under approval; `workflows validate` describes a file without
// running it; `workflows versions` lists a workflow's snapshots with their run counts. Real
// CLI processes, a real serve, real Deno children.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { listVersions, validateFile } from '../../cli/workflow-files.ts';
import { FileTables, type RunOutput } from '../../src/adapters/sqlite/file-tables.ts';
import { ReadOnlyFile } from '../../src/adapters/sqlite/run-reader.ts';
import { tranquilCli } from '../cli-bin.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = tranquilCli();
const dirs: string[] = [];
const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) if (p.exitCode === null && p.pid) process.kill(p.pid, 'SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function cli(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 90_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The run's row and its child's output, read-only from the data dir's SQLite file. */
function readRun(data: string, runId: string): { status: string; output: string | null; child?: RunOutput } {
  const file = ReadOnlyFile.open(data)!;
  try {
    const row = file.db.prepare('SELECT status, output FROM runs WHERE run_id = ?').get(runId) as { status: string; output: string | null };
    return { ...row, child: new FileTables(file.db).output(runId) };
  } finally {
    file.close();
  }
}

const FLOW = (tag: string) => `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-served', { permissions: { env: ['TRANQUIL_SERVED'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('s', () => '${tag}'));
});
`;

describe('tranquil CLI: workflow files through the runner', () => {
  it('workflows validate prints name, version, triggers, declaration; a bad file gives one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-validate-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'good.ts'), FLOW('v1'));
    writeFileSync(join(dir, 'bad.ts'), `export default 42;\n`);
    const good = cli(dir, 'workflows', 'validate', 'good.ts', '--json');
    expect(good.status, good.stderr).toBe(0);
    const v = JSON.parse(good.stdout) as { name: string; version: string; triggers: { type: string }[]; declaration: unknown; hash: string };
    expect(v.name).toBe('file-served');
    expect(v.version).toMatch(/^[0-9a-f]{24}$/);
    expect(v.triggers).toEqual([{ type: 'manual' }]);
    expect(v.declaration).toEqual({ env: ['TRANQUIL_SERVED'] });
    // The same function in-process (each CLI start costs seconds on a loaded machine).
    return expect(validateFile(join(dir, 'bad.ts'))).rejects.toThrow(/^workflow file .*bad\.ts: could not be described .*no default export made by workflow\(\)$/);
  }, 120_000);

  it('serve --workflows: an unapproved file does not run; approve releases it; versions counts its runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-serve-files-'));
    dirs.push(dir);
    const flows = join(dir, 'flows');
    mkdirSync(flows);
    writeFileSync(join(flows, 'served.ts'), FLOW('v1'));
    const data = join(dir, 'data');
    const server = spawn(process.execPath, [BIN, 'serve', '--workflows', flows, '--data-dir', data, '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(server);
    let stderr = '';
    server.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const lines = createInterface({ input: server.stdout! });
    const ready = await new Promise<{ workflows: string[] }>((resolve, reject) => {
      lines.on('line', (l) => {
        const m = JSON.parse(l) as { event: string; workflows: string[] };
        if (m.event === 'ready') resolve(m);
      });
      server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    try {
      expect(ready.workflows).toEqual(['file-served']);
      const run = cli(dir, 'run', 'file-served', '--data-dir', data, '--json');
      expect(run.status, run.stderr).toBe(0);
      const r = JSON.parse(run.stdout) as { runId: string; status: string; error: { name: string } };
      expect(r.status).toBe('blocked');
      expect(r.error.name).toBe('ApprovalRequired');
      // Not run: no Deno child was started for it (read in-process: each CLI start is slow).
      expect(readRun(data, r.runId).status).toBe('blocked');
      expect(readRun(data, r.runId).child).toBeUndefined();

      const approved = cli(dir, 'workflows', 'approve', 'file-served', '--data-dir', data);
      expect(approved.status, approved.stderr).toBe(0);
      expect(approved.stdout).toContain(`released 1 blocked run: ${r.runId}`);
      let after = readRun(data, r.runId);
      for (let i = 0; i < 600 && after.status !== 'succeeded'; i++) {
        await new Promise((res) => setTimeout(res, 100));
        after = readRun(data, r.runId);
      }
      expect(after.status).toBe('succeeded');
      expect(after.output).toBe('"v1"');
      expect(after.child?.exit).toBe('code 0');

      const versions = cli(dir, 'workflows', 'versions', 'file-served', '--data-dir', data, '--json');
      expect(versions.status, versions.stderr).toBe(0);
      const list = JSON.parse(versions.stdout) as { version: string; approved: boolean; liveRuns: number; storedRuns: number; files: number }[];
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ approved: true, liveRuns: 0, storedRuns: 1, files: 1 });
      expect(() => listVersions(data, 'nope')).toThrow(/no snapshot of workflow 'nope'/);
    } finally {
      process.kill(server.pid!, 'SIGTERM');
      await new Promise((res) => (server.exitCode !== null ? res(null) : server.once('exit', res)));
    }
  }, 180_000);
});
