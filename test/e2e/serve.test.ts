// `tranquil serve` as a real process: spawned, driven over loopback (a webhook, CLI commands
// through the control endpoint, read-only commands beside it), a second serve refused, then
// stopped BY PID with SIGTERM. Afterwards the same CLI works with no serve (in-process).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { schedule, workflow } from '@tranquil/sdk';
import { createTestEngine } from '@tranquil/engine/testing';
import { tranquilCli } from '../cli-bin.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = tranquilCli();
const CONFIG = join(ROOT, 'test/e2e/fixtures/tranquil.config.ts');

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function cli(dataDir: string, ...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir, '--config', CONFIG], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout.trim(), err: r.stderr.trim() };
}

const json = <T>(r: { code: number; out: string; err: string }): T => {
  if (r.code !== 0) throw new Error(`cli failed (${r.code}): ${r.err}`);
  return JSON.parse(r.out) as T;
};

interface Ready {
  event: 'ready';
  pid: number;
  webhook: { host: string; port: number };
  hooks: Record<string, string>;
}

/** Spawns serve and resolves with its parsed 'ready' line; collects every later line. */
function startServe(dataDir: string): Promise<{ child: ChildProcess; ready: Ready; lines: string[]; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--data-dir', dataDir, '--config', CONFIG], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolveReady, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const msg = JSON.parse(line) as { event: string };
      if (msg.event === 'ready') resolveReady({ child, ready: msg as Ready, lines, exit });
    });
    void exit.then((code) => reject(new Error(`serve exited early (${code}): ${stderr}`)));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tranquil serve (spawned process)', () => {
  it('serves a webhook over loopback, takes CLI commands, refuses a second serve, stops on SIGTERM by pid', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-serve-'));
    dirs.push(dataDir);
    const { child, ready, lines, exit } = await startServe(dataDir);
    expect(ready.pid).toBe(child.pid);
    expect(ready.webhook.host).toBe('127.0.0.1');
    const url = ready.hooks['signup-hook']!;
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ready.webhook.port}/hooks/signup-hook/[A-Za-z0-9_-]{43}$`));
    expect(statSync(join(dataDir, 'serve.json')).mode & 0o777).toBe(0o600);

    // A webhook fired at the running serve.
    const hook = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com' }) });
    expect(hook.status).toBe(202);
    const { runId } = (await hook.json()) as { runId: string };
    expect((await fetch(url.replace(/[^/]+$/, 'wrong'), { method: 'POST', body: '{}' })).status).toBe(404);

    // Read-only commands work beside the owner (no lease taken).
    let view: { status: string; output?: unknown } | undefined;
    for (let i = 0; i < 200 && view?.status !== 'succeeded'; i++) {
      view = json(cli(dataDir, 'runs', 'describe', runId, '--json'));
      if (view!.status !== 'succeeded') await sleep(25);
    }
    expect(view).toMatchObject({ status: 'succeeded', output: 'stored ada@example.com' });
    expect(json<{ name: string }[]>(cli(dataDir, 'workflows', 'list', '--json')).map((w) => w.name)).toEqual(['greet', 'approval', 'signup-hook']);

    // Mutating commands go to the serve over its control endpoint.
    const run = json<{ runId: string; status: string }>(cli(dataDir, 'run', 'approval', '--json'));
    expect(run.status).toBe('waiting');
    json(cli(dataDir, 'signal', run.runId, 'decision', '--data', '{"ok":true}', '--json'));
    const emitted = json<{ runIds: string[] }>(cli(dataDir, 'emit', 'user.signed_up', '--data', '{"name":"bo"}', '--id', 'evt-9', '--json'));
    expect(emitted.runIds).toHaveLength(1);
    const bad = cli(dataDir, 'signal', 'no-such-run', 'decision');
    expect(bad.code).toBe(1);
    expect(bad.err).toBe("tranquil: UnknownRunError: unknown run 'no-such-run'");

    // A second serve on the same data dir refuses, naming the owner; the first is unharmed.
    const second = spawnSync(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--config', CONFIG], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(second.status).toBe(1);
    expect(second.stderr.trim()).toMatch(new RegExp(`refusing to serve .*in use by another engine \\(pid ${child.pid} `));
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"c@example.com"}' })).status).toBe(202);

    // A cancel from the CLI is recorded as the CLI's, with the user and host, and why says so.
    const doomed = json<{ runId: string; status: string }>(cli(dataDir, 'run', 'approval', '--json'));
    expect(doomed.status).toBe('waiting');
    json(cli(dataDir, 'runs', 'cancel', doomed.runId, '--json'));
    let cancelled: { status: string; cancel?: { by: string; at: string } } | undefined;
    for (let i = 0; i < 200 && cancelled?.status !== 'cancelled'; i++) {
      cancelled = json(cli(dataDir, 'runs', 'describe', doomed.runId, '--json'));
      if (cancelled!.status !== 'cancelled') await sleep(25);
    }
    const asker = `cli (${userInfo().username}@${hostname()})`;
    expect(cancelled?.cancel?.by).toBe(asker);
    expect(cli(dataDir, 'why', doomed.runId).out).toContain(`was cancelled by ${asker} at ${cancelled!.cancel!.at}`);
    expect(cli(dataDir, 'runs', 'describe', doomed.runId).out).toContain(`\n  cancelled by ${asker} at ${cancelled!.cancel!.at}\n`);

    // Stop by pid.
    process.kill(child.pid!, 'SIGTERM');
    expect(await exit).toBe(0);
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(['ready', 'stopping', 'stopped']);
    expect(existsSync(join(dataDir, 'serve.json'))).toBe(false);

    // With no serve, the same commands run an engine in-process on the data dir.
    const done = json<{ status: string; output: unknown }>(cli(dataDir, 'run', 'greet', '--input', '{"name":"cy"}', '--json'));
    expect(done).toMatchObject({ status: 'succeeded', output: 'hello cy' });
    const approved = json<{ status: string; output: unknown }>(cli(dataDir, 'runs', 'describe', run.runId, '--json'));
    expect(approved).toMatchObject({ status: 'succeeded', output: 'approved' });
    const why = cli(dataDir, 'why', run.runId);
    expect(why.out).toMatch(/succeeded after 1 completed step/);
  }, 120_000);

  it('bad input exits 1 with a one-line error', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-cli-'));
    dirs.push(dataDir);
    for (const [args, msg] of [
      [['runs', 'describe', 'r1'], /^tranquil: ValidationError: --data-dir: no Tranquil data in /],
      [['run', 'greet', '--input', '{nope'], /^tranquil: ValidationError: --input: not valid JSON/],
      [['run', 'nope'], /^tranquil: UnknownWorkflowError: unknown workflow 'nope'$/],
      [['runs', 'list', '--status', 'bogus'], /^tranquil: ValidationError: --status: expected one of/],
      [['runs', 'describe', 'r1'], /^tranquil: UnknownRunError: unknown run 'r1'$/],
    ] as const) {
      const r = cli(dataDir, ...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err.split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.err).toMatch(msg);
    }
  }, 60_000);

  it("why <workflow> answers from the slot ledger: why didn't my 9am job run?", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-why-'));
    dirs.push(dataDir);
    const wf = workflow('nine-am', (w) => {
      w.trigger(schedule('0 9 * * *', { catchUp: 'none' }));
      w.run(async () => 'done');
    });
    await (await createTestEngine({ workflows: [wf], dataDir, startAt: '2026-01-05T10:00:00Z' })).close();
    await (await createTestEngine({ workflows: [wf], dataDir, startAt: '2026-01-06T12:00:00Z' })).close();
    const r = spawnSync(process.execPath, [BIN, 'why', 'nine-am', '--data-dir', dataDir], { cwd: dataDir, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/last slot 2026-01-06T09:00:00.000Z was missed: passed while the engine was not running; catchUp 'none'/);
    expect(r.stdout).toMatch(/next slot 2026-01-07T09:00:00.000Z/);
  }, 60_000);
});
