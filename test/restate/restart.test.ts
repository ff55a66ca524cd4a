// Restate backend: a run survives the engine process (its SDK endpoint) dying mid-run, and
// restate-server itself dying mid-run. Real processes, stopped by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine } from '@tranquil/engine';
import { removeDataDir } from './data-dir.ts';

const dirs: string[] = [];
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs) removeDataDir(d);
});

function child(dataDir: string, log: string, wait: boolean) {
  const c = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'engine-child.ts')], {
    env: { ...process.env, DATA_DIR: dataDir, LOG: log, WAIT: wait ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(c);
  c.once('exit', () => children.delete(c));
  let out = '';
  const seen = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const check = () => out.includes(text) && resolve(out);
      c.stdout!.on('data', (d) => ((out += String(d)), check()));
      c.once('exit', (code) => (out.includes(text) ? resolve(out) : reject(new Error(`child exited (${code}) before '${text}': ${out}`))));
    });
  return { c, seen };
}

it('a run survives a SIGKILL of the engine process mid-run (the endpoint), finishing with the same keys', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-restart-'));
  dirs.push(dir);
  const log = join(dir, 'attempts.log');
  const first = child(join(dir, 'data'), log, false);
  await first.seen('READY');
  // Wait until step a's result is journaled (the run is in its sleep), then kill the engine
  // process: a kill between a's body and its journal write would rightly run a again.
  await first.seen('SLEEPING');
  process.kill(first.c.pid!, 'SIGKILL');
  // The orphaned restate-server keeps the run; a new engine process adopts it and serves it.
  const second = child(join(dir, 'data'), log, true);
  const out = await second.seen('DONE');
  expect(out).toMatch(/DONE succeeded \{"a":"A","b":"B","at":\d+\}/);
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  expect(lines.filter((l) => l.startsWith('a ')).map((l) => l.split(' ')[1])).toEqual(['r1/a']);
  expect(new Set(lines.filter((l) => l.startsWith('b ')).map((l) => l.split(' ')[1]))).toEqual(new Set(['r1/b']));
}, 90_000);

it('a run survives a SIGKILL of restate-server mid-run: the engine restarts it and the run finishes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-server-'));
  dirs.push(dir);
  const calls: string[] = [];
  const wf = workflow('survivor', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      await step.do('before', ({ idempotencyKey }) => calls.push(`before ${idempotencyKey}`));
      await step.sleep('nap', 1200);
      await step.do('after', ({ idempotencyKey }) => calls.push(`after ${idempotencyKey}`));
      return 'ok';
    });
  });
  const engine = await createEngine({ backend: 'restate', dataDir: join(dir, 'data'), workflows: [wf] });
  await engine.start();
  try {
    const { runId } = await engine.trigger('survivor', null);
    for (let i = 0; i < 200 && (await engine.runs.get(runId)).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 25));
    const pid = Number(readFileSync(join(dir, 'data', 'restate', 'server.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view.status).toBe('succeeded');
    expect(calls.filter((c) => c.startsWith('before'))).toEqual([`before ${runId}/before`]);
    expect(new Set(calls.filter((c) => c.startsWith('after')))).toEqual(new Set([`after ${runId}/after`]));
    expect(Number(readFileSync(join(dir, 'data', 'restate', 'server.pid'), 'utf8'))).not.toBe(pid);
  } finally {
    await engine.stop();
  }
}, 90_000);

// A body's attempt is cut when restate-server dies (as when the node leading its partition
// dies in a cluster): the invocation's next attempt runs the unrecorded body again, in the same
// queue slot. The cut body's signal aborts first, so a body that passes it on never runs beside
// its own retry (the cluster test's queue case counts on it: test/cluster/cluster.test.ts).
it('a body whose Restate attempt is cut by a SIGKILL of restate-server is told to stop before its retry starts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-cut-'));
  dirs.push(dir);
  const seen: { attempt: number; start: number; aborted?: { at: number; reason: string } }[] = [];
  const wf = workflow('cut', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) =>
      step.do('call', ({ signal }) => {
        const me: (typeof seen)[number] = { attempt: seen.length + 1, start: Date.now() };
        seen.push(me);
        if (me.attempt > 1) return 'again';
        // The first one waits for its signal (at most 30 s: a body nobody stops ends anyway).
        return new Promise<string>((resolve) => {
          const t = setTimeout(() => resolve('late'), 30_000);
          signal.addEventListener('abort', () => {
            clearTimeout(t);
            me.aborted = { at: Date.now(), reason: String((signal.reason as Error)?.message ?? signal.reason) };
            resolve('aborted');
          }, { once: true });
        });
      }),
    );
  });
  const engine = await createEngine({ backend: 'restate', dataDir: join(dir, 'data'), workflows: [wf] });
  await engine.start();
  try {
    const { runId } = await engine.trigger('cut', null);
    for (let i = 0; i < 400 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(seen).toHaveLength(1);
    process.kill(Number(readFileSync(join(dir, 'data', 'restate', 'server.pid'), 'utf8')), 'SIGKILL');
    const view = await engine.result(runId, { timeout: '60s' });
    expect(view).toMatchObject({ status: 'succeeded', output: 'again' });
    expect(seen.map((s) => s.attempt)).toEqual([1, 2]);
    expect(seen[0]!.aborted?.reason).toMatch(/Restate attempt running run .* ended/);
    expect(seen[0]!.aborted!.at).toBeLessThanOrEqual(seen[1]!.start);
  } finally {
    await engine.stop();
  }
}, 90_000);

it('a code change registers a new deployment; a run in flight finishes after the change; the old deployment goes once no run is pinned to it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-deploy-'));
  dirs.push(dir);
  const dataDir = join(dir, 'data');
  // Two versions of the source (the version is a digest of the code text). The run waits for
  // a signal, so it stays pinned to the v1 deployment for as long as the test says.
  const v1wf = workflow('evolving', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      await step.waitForEvent('go');
      return step.do('finish', () => 'v1');
    });
  });
  const v2wf = workflow('evolving', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      await step.waitForEvent('go');
      return step.do('finish', () => 'v2');
    });
  });
  const v1 = await createEngine({ backend: 'restate', dataDir, workflows: [v1wf] });
  await v1.start();
  const { runId } = await v1.trigger('evolving', null);
  for (let i = 0; i < 200 && (await v1.runs.get(runId)).status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 25));
  const versionBefore = (await v1.runs.get(runId)).version;
  await v1.stop();
  // A sweep every 200 ms (config restate.deploymentSweep; default 10 minutes).
  const v2 = await createEngine({ backend: 'restate', dataDir, workflows: [v2wf], restate: { deploymentSweep: 200 } });
  await v2.start();
  const ours = async () => {
    const { admin } = JSON.parse(readFileSync(join(dataDir, 'restate', 'ports.json'), 'utf8')) as { admin: number };
    const res = await fetch(`http://127.0.0.1:${admin}/deployments`);
    return ((await res.json()) as { deployments: { uri: string; metadata?: Record<string, string> }[] }).deployments.filter((d) => d.metadata?.tranquil);
  };
  try {
    // Several sweeps later the v1 deployment is still there: the waiting run is pinned to it.
    await new Promise((r) => setTimeout(r, 1000));
    const both = await ours();
    expect(both).toHaveLength(2);
    expect(new Set(both.map((d) => new URL(d.uri).pathname)).size).toBe(2);
    await v2.signal(runId, 'go', null);
    const view = await v2.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.version).toBe(versionBefore);
    expect(view.output).toBe('v2'); // served by the code this process has (docs/restate.md)
    // Deployment hygiene while running: no live invocation is pinned to v1 any more.
    for (let i = 0; i < 100 && (await ours()).length !== 1; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await ours()).toHaveLength(1);
  } finally {
    await v2.stop();
  }
  // The next start keeps the one current deployment.
  const again = await createEngine({ backend: 'restate', dataDir, workflows: [v2wf] });
  await again.start();
  try {
    expect(await ours()).toHaveLength(1);
    expect((await again.runs.get(runId)).status).toBe('succeeded');
  } finally {
    await again.stop();
  }
}, 120_000);
