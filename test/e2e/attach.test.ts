// attach({ dataDir }) against a real `tranquil serve` process (the OS service's command line):
// the test process plays the embedding app. It detects the service, is refused the data dir
// by the owner lease (a typed DataDirInUseError naming the serve's pid) while attach works,
// triggers runs through the handle, awaits results, signals a waiting run, lists runs,
// explains one; bad frames and a bad token are refused in one line; an untrusted serve.json
// is refused; after the serve is stopped BY PID the handle says so and the app may own the dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  attach, BackendUnavailableError, createEngine, DataDirInUseError, findService, StorageError, UnknownWorkflowError, ValidationError, type ServiceClient,
} from '@tranquil/engine';
import { TerminalError } from '@tranquil/sdk';
import config from './fixtures/tranquil.config.ts';
import hostConfig from './fixtures/host.config.ts';
import { serveReady, until as untilSome, whenReady } from './ready-child.ts';
import { startControl } from '../../src/adapters/http/control-server.ts';
import { sendOp } from '../../src/adapters/http/control-client.ts';
import { applyOp, type Op } from '../../src/adapters/http/control-protocol.ts';
import { tranquilCli } from '../cli-bin.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = tranquilCli();
const CONFIG = join(ROOT, 'test/e2e/fixtures/tranquil.config.ts');
const HOST_CONFIG = join(ROOT, 'test/e2e/fixtures/host.config.ts');

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function startServe(dataDir: string, config = CONFIG): Promise<{ child: ChildProcess; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--no-panel', '--data-dir', dataDir, '--config', config], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  return whenReady(child, children, 'serve', serveReady);
}

const until = <T>(what: string, f: () => Promise<T | undefined>) => untilSome(what, f, 500);

describe('attach() to the service that owns a data dir', () => {
  it('detects the serve, is refused the dir, drives runs through the handle, and notices the serve stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-attach-'));
    dirs.push(dataDir);
    expect(findService(dataDir)).toBeUndefined();
    await expect(attach({ dataDir })).rejects.toThrow(BackendUnavailableError);

    const { child, exit } = await startServe(dataDir);
    const found = findService(dataDir);
    expect(found).toMatchObject({ pid: child.pid, host: '127.0.0.1' });

    // The app's own engine is refused: one owner per data dir, and the error names it.
    const mine = await createEngine({ dataDir, workflows: config.workflows });
    const refused = await mine.start().then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect(refused).toBeInstanceOf(StorageError);
    expect((refused as DataDirInUseError).pid).toBe(child.pid);
    await mine.stop().catch(() => {});

    // ... while attach works.
    const svc: ServiceClient = await attach({ dataDir });
    expect(svc.pid).toBe(child.pid);
    expect(svc.backend).toBe('sqlite');
    expect([...svc.workflows].sort()).toEqual(['approval', 'greet', 'signup-hook']);

    const greet = await svc.trigger('greet', { name: 'ada' });
    expect(greet.created).toBe(true);
    expect(await svc.result(greet.runId, { timeout: '20s' })).toMatchObject({ runId: greet.runId, status: 'succeeded', output: 'hello ada' });
    expect(await svc.trigger('greet', { name: 'ada' }, { runId: greet.runId })).toEqual({ runId: greet.runId, created: false });

    // A run waiting for a signal, signalled through the handle.
    const approval = await svc.trigger('approval');
    const why = await until('approval waits', async () => {
      const x = await svc.runs.explain(approval.runId);
      return x.waitingFor?.kind === 'signal' ? x : undefined;
    });
    expect(why.status).toBe('waiting');
    await expect(svc.result(approval.runId, { timeout: 50 })).rejects.toThrow(/did not finish within 50ms/);
    await svc.signal(approval.runId, 'decision', { ok: true });
    expect(await svc.result(approval.runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: 'approved' });

    const emitted = await svc.emit('user.signed_up', { name: 'bo' }, { id: 'evt-1' });
    expect(emitted.runIds).toHaveLength(1);
    expect((await svc.emit('user.signed_up', { name: 'bo' }, { id: 'evt-1' })).duplicate).toBe(true);
    await svc.result(emitted.runIds[0]!, { timeout: '20s' });

    const all = await svc.runs.list();
    expect(all.map((r) => r.runId).sort()).toEqual([greet.runId, approval.runId, emitted.runIds[0]!].sort());
    const page = await svc.runs.list({ workflow: 'greet', limit: 1 });
    expect(page).toHaveLength(1);
    expect(typeof page.next).toBe('string');
    expect((await svc.runs.list({ workflow: 'greet', cursor: page.next })).length).toBe(1);
    expect((await svc.runs.get(greet.runId)).steps.map((s) => s.name)).toEqual(['hello']);

    // Errors come back as their classes, in one line.
    await expect(svc.trigger('nope')).rejects.toThrow(UnknownWorkflowError);
    await expect(svc.signal(approval.runId, 'bad#name')).rejects.toThrow(ValidationError);
    await expect(svc.runs.list({ limit: 0 })).rejects.toThrow(/^runs\.list filter\.limit: /);

    // The channel: loopback, token from the 0600 file, every frame checked.
    const info = JSON.parse(readFileSync(join(dataDir, 'serve.json'), 'utf8')) as { port: number; token: string };
    const post = (body: string, token = info.token) =>
      fetch(`http://127.0.0.1:${info.port}/control`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    const wrongToken = await post('{"op":"hello"}', 'x'.repeat(43));
    expect(wrongToken.status).toBe(401);
    const badFrame = await post('{"op":"trigger","workflow":""}');
    expect(badFrame.status).toBe(400);
    const bad = (await badFrame.json()) as { error: { name: string; message: string } };
    expect(bad.error.name).toBe('ValidationError');
    expect(bad.error.message).toMatch(/^request\.workflow: /);
    expect(bad.error.message.split('\n')).toHaveLength(1);
    expect((await post('{"op":"drop tables"}')).status).toBe(400);
    expect((await post('not json')).status).toBe(400);

    // A serve.json others could read (or have written) is not trusted.
    chmodSync(join(dataDir, 'serve.json'), 0o644);
    await expect(svc.runs.get(greet.runId)).rejects.toThrow(/readable or writable by others \(mode 644\)/);
    expect(findService(dataDir)).toBeUndefined();
    chmodSync(join(dataDir, 'serve.json'), 0o600);
    expect(svc.connected()).toBe(true);

    // The service stops (by pid): the handle says so; the app may now own the data dir.
    process.kill(child.pid!, 'SIGTERM');
    expect(await exit).toBe(0);
    expect(svc.connected()).toBe(false);
    await expect(svc.runs.get(greet.runId)).rejects.toThrow(BackendUnavailableError);
    const owner = await createEngine({ dataDir, workflows: config.workflows });
    await owner.start();
    try {
      expect((await owner.runs.get(approval.runId)).output).toBe('approved');
    } finally {
      await owner.stop();
    }
  }, 60_000);
});

describe('capability providers from an attached app', () => {
  it('a run in the service parks, is served by the app\'s matching provider only, and parks again when the app closes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-attach-cap-'));
    dirs.push(dataDir);
    const { child, exit } = await startServe(dataDir, HOST_CONFIG);
    const svc = await attach({ dataDir });
    try {
      const parkedWhy = async (runId: string) => until(`${runId} parks`, async () => {
        const x = await svc.runs.explain(runId);
        if (x.status === 'failed') throw new Error(x.summary);
        return x.status === 'parked' ? x : undefined;
      });
      const first = await svc.trigger('scrape', { url: 'https://intranet/a' });
      expect((await parkedWhy(first.runId)).waitingFor).toMatchObject({ kind: 'capability', capability: 'browser.scrape', affinity: { partition: 'work' } });

      // A provider with another partition is never used, even with the run parked.
      const wrongCalls: unknown[] = [];
      await svc.capabilities.provide('browser.scrape', { partition: 'home' }, (input) => {
        wrongCalls.push(input);
        return { wrong: true };
      });
      const served: { runId: string; key: string }[] = [];
      const withdraw = await svc.capabilities.provide('browser.scrape', { partition: 'work', window: 'w1' }, (input, info) => {
        served.push({ runId: info.runId, key: info.idempotencyKey });
        if ((input as { url: string }).url.endsWith('/refuse')) throw new TerminalError('the user closed the login prompt');
        return { by: process.pid, key: info.idempotencyKey, url: (input as { url: string }).url };
      });
      expect(svc.capabilities.list()).toEqual([
        { capability: 'browser.scrape', attrs: { partition: 'home' } },
        { capability: 'browser.scrape', attrs: { partition: 'work', window: 'w1' } },
      ]);
      // The parked run resumed and the provider ran HERE (the app's pid), not in the service.
      const done = await svc.result(first.runId, { timeout: '20s' });
      expect(done).toMatchObject({ status: 'succeeded', output: { by: process.pid, key: `${first.runId}/browser.scrape`, url: 'https://intranet/a' } });
      expect(child.pid).not.toBe(process.pid);

      // A TerminalError thrown in the app is the step's TerminalError in the service.
      const refused = await svc.trigger('scrape', { url: 'https://intranet/refuse' });
      const failed = await svc.result(refused.runId, { timeout: '20s' });
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ name: 'TerminalError', message: 'the user closed the login prompt' });

      // Withdrawn (the window closed): the next run parks again; the 'home' provider never ran.
      withdraw();
      await until('withdrawn', async () => (svc.capabilities.list().length === 1 ? true : undefined));
      const later = await svc.trigger('scrape', { url: 'https://intranet/b' });
      await parkedWhy(later.runId);
      await svc.close();
      expect(svc.capabilities.list()).toEqual([]);
      expect(wrongCalls).toEqual([]);
      expect(served.map((s) => s.runId)).toEqual([first.runId, refused.runId]);

      // Provided again (a new handle, as after the app restarts): the parked run resumes.
      const again = await attach({ dataDir });
      await again.capabilities.provide('browser.scrape', { partition: 'work' }, (input) => ({ by: process.pid, key: 'again', url: (input as { url: string }).url }));
      expect(await again.result(later.runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: { key: 'again', url: 'https://intranet/b' } });

      // The service restarts (stopped by pid, started again): the handle follows it and its
      // provider is registered again with the new serve.
      process.kill(child.pid!, 'SIGTERM');
      expect(await exit).toBe(0);
      const next = await startServe(dataDir, HOST_CONFIG);
      try {
        const after = await until('the handle reaches the new serve', async () => again.trigger('scrape', { url: 'https://intranet/d' }).catch(() => undefined));
        expect(await again.result(after.runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: { key: 'again', url: 'https://intranet/d' } });
        expect(findService(dataDir)?.pid).toBe(next.child.pid);
        await again.close();
      } finally {
        process.kill(next.child.pid!, 'SIGTERM');
        expect(await next.exit).toBe(0);
      }
    } finally {
      await svc.close();
      if (child.exitCode === null) process.kill(child.pid!, 'SIGTERM');
    }
  }, 60_000);
});

describe('an attached app that goes away', () => {
  it('its providers are withdrawn when it stops polling, and the call it held parks the run', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-attach-gone-'));
    dirs.push(dataDir);
    // The serve's own parts, in this process, with a short provider lease; the "app" is raw frames.
    const engine = await createEngine({ dataDir, workflows: hostConfig.workflows });
    await engine.start();
    const control = await startControl(engine, dataDir, { providerLeaseMs: 300 });
    try {
      const op = (o: Op) => sendOp(control.info, o);
      const { providerId } = (await op({ op: 'provide', capability: 'browser.scrape', attrs: { partition: 'work' } })) as { providerId: string };
      const { runId } = await engine.trigger('scrape', { url: 'https://intranet/c' });
      const got = (await op({ op: 'poll', providerId, waitMs: 10_000 })) as { calls: { callId: string; runId: string; idempotencyKey: string }[] };
      expect(got.calls).toHaveLength(1);
      expect(got.calls[0]).toMatchObject({ runId, idempotencyKey: `${runId}/browser.scrape` });
      // The app dies holding the call: no answer, no poll. The lease runs out, the provider is
      // withdrawn and the step parks (not failed, not an attempt).
      const parked = await until('parks', async () => {
        const x = await engine.runs.explain(runId);
        return x.status === 'parked' ? x : undefined;
      });
      expect(parked.waitingFor).toMatchObject({ kind: 'capability', capability: 'browser.scrape' });
      expect(engine.capabilities.list()).toEqual([]);
      await expect(op({ op: 'poll', providerId, waitMs: 0 })).rejects.toThrow(/^providerId: no provider '.*' is registered with this serve/);
      // A late answer is dropped, one line, nothing stored.
      await expect(op({ op: 'answer', providerId, callId: got.calls[0]!.callId, result: 1 })).rejects.toThrow(ValidationError);
      // In-process (no serve) the provider ops are refused.
      await expect(applyOp(engine, { op: 'provide', capability: 'x', attrs: {} })).rejects.toThrow(/served only by a running tranquil serve/);
    } finally {
      await control.stop();
      await engine.stop();
    }
  }, 30_000);
});
