// The CLI's plain-workflow commands as a child process (bin/tranquil.mjs) on a real data dir:
// validate prints the one-line loader error and exits 1; versions lists the stored versions
// with the live-run count each has (a v3 run still sleeping while v4 is registered).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, plainWorkflow, type Actions } from '@tranquil/engine';
import { REFERENCE } from './reference.ts';
import { tranquilCli } from '../cli-bin.ts';

const BIN = tranquilCli();
const dir = mkdtempSync(join(tmpdir(), 'tranquil-plain-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, TRANQUIL_BACKEND: 'sqlite' };
  delete env.TRANQUIL_DATA_DIR;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((r) => child.once('close', (code) => r({ code: code ?? -1, out: out.trim(), err: err.trim() })));
}

const actions: Actions = { 'app.load_user': () => ({ activated: false, email: 'e@example.com' }), 'mail.send_template': () => ({ ok: true }) };

describe('tranquil workflows validate | versions (plain-data workflows)', () => {
  it('validate: ok for the reference; a bad one gives its line, column and path and exits 1', async () => {
    writeFileSync(join(dir, 'good.yaml'), REFERENCE);
    writeFileSync(join(dir, 'bad.yaml'), REFERENCE.replace('base: 30s', 'base: soon'));
    const ok = await cli('workflows', 'validate', 'good.yaml');
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^ok: activation_nudge version 3 \(v3-[0-9a-f]{12}\), 4 steps: pause, fetch, gate, nudge$/);
    const bad = await cli('workflows', 'validate', 'bad.yaml');
    expect(bad.code).toBe(1);
    expect(bad.err).toBe("tranquil: PlainWorkflowError: bad.yaml:16:50: steps[3].retry.base: bad duration: 'soon' is not a duration (use e.g. '30s', '15m', '48h', '7d')");
  }, 60_000);

  it('versions: v3 with its sleeping run, v4 with none', async () => {
    const dataDir = join(dir, 'data');
    const v3 = await createEngine({ backend: 'sqlite', dataDir, workflows: [plainWorkflow(REFERENCE)], actions, log: { level: 'silent' } });
    await v3.start();
    const { runId } = await v3.trigger('activation_nudge', { user_id: 'u' });
    await v3.executor.idle();
    expect((await v3.runs.get(runId)).status).toBe('sleeping');
    await v3.stop();
    const v4 = await createEngine({ backend: 'sqlite', dataDir, workflows: [plainWorkflow(REFERENCE.replace('version: 3', 'version: 4'))], actions, log: { level: 'silent' } });
    await v4.start();
    await v4.stop();
    const r = await cli('workflows', 'versions', 'activation_nudge', '--data-dir', dataDir, '--json');
    expect(r.code, r.err).toBe(0);
    const rows = JSON.parse(r.out) as { version: number; liveRuns: number; runs: number }[];
    expect(rows.map((x) => [x.version, x.liveRuns, x.runs])).toEqual([[3, 1, 1], [4, 0, 0]]);
  }, 60_000);
});
