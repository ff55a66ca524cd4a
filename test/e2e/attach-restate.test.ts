// attach({ dataDir }) against a real `tranquil serve` on the Restate backend
// (TRANQUIL_BACKEND=restate: the serve starts its embedded restate-server under
// <dataDir>/restate; a serve killed by a failed test leaves it, and removeDataDir stops it by
// the pid it recorded). The journey of attach.test.ts (the SQLite serve) in one serve to keep
// it short; the test process is the app. It finds the service, its own engine is refused the
// data dir, and through the handle it triggers and awaits a run, signals a waiting one, emits
// with dedup, pages runs, explains, cancels; a capability step parks in the service and only
// the app's matching provider serves it; a TerminalError crosses; a withdrawn provider parks
// the next run, which stays parked through a serve restart and resumes on a provider
// registered with the new serve; the failed run is retried through the handle. Then an app
// that dies holding a call, on both backends side by side. Any difference from the SQLite
// serve is a bug.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { attach, createEngine, DataDirInUseError, findService, StorageError, UnknownWorkflowError, ValidationError } from '@tranquil/engine';
import { serveReady, until, whenReady } from './ready-child.ts';
import { startControl } from '../../src/adapters/http/control-server.ts';
import { sendOp } from '../../src/adapters/http/control-client.ts';
import type { Op } from '../../src/adapters/http/control-protocol.ts';
import { TerminalError } from '@tranquil/sdk';
import config from './fixtures/attach.config.ts';
import hostConfig from './fixtures/host.config.ts';
import { removeDataDir } from '../restate/data-dir.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/tranquil.mjs');
const CONFIG = join(ROOT, 'test/e2e/fixtures/attach.config.ts');

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  // A serve killed above leaves its restate-server: removeDataDir stops it by its recorded pid.
  for (const d of dirs.splice(0)) removeDataDir(d);
});

function startServe(dataDir: string): Promise<{ child: ChildProcess; exit: Promise<number | null> }> {
  const env = { ...process.env, TRANQUIL_BACKEND: 'restate' };
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--no-panel', '--data-dir', dataDir, '--config', CONFIG], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return whenReady(child, children, 'serve', serveReady);
}

describe('attach() to a Restate-backed tranquil serve', () => {
  it('finds it, is refused the dir, drives runs, and serves a parked capability step from the app', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-attach-rs-'));
    dirs.push(dataDir);
    const { child, exit } = await startServe(dataDir);
    expect(findService(dataDir)).toMatchObject({ pid: child.pid, host: '127.0.0.1' });

    // The app's own engine (same backend) is refused: one owner per data dir, named.
    const mine = await createEngine({ backend: 'restate', dataDir, workflows: config.workflows });
    const refused = await mine.start().then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect(refused).toBeInstanceOf(StorageError);
    expect((refused as DataDirInUseError).pid).toBe(child.pid);
    await mine.stop().catch(() => {});

    const svc = await attach({ dataDir });
    try {
      expect(svc.pid).toBe(child.pid);
      expect(svc.backend).toBe('restate');
      expect([...svc.workflows].sort()).toEqual(['approval', 'greet', 'scrape', 'signup-hook']);

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
      expect(emitted).toMatchObject({ duplicate: false });
      expect(emitted.runIds).toHaveLength(1);
      expect(await svc.emit('user.signed_up', { name: 'bo' }, { id: 'evt-1' })).toEqual({ runIds: emitted.runIds, duplicate: true });
      expect(await svc.result(emitted.runIds[0]!, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: 'hello bo' });

      const all = await svc.runs.list();
      expect(all.map((r) => r.runId).sort()).toEqual([greet.runId, approval.runId, emitted.runIds[0]!].sort());
      const page = await svc.runs.list({ workflow: 'greet', limit: 1 });
      expect(page).toHaveLength(1);
      expect(typeof page.next).toBe('string');
      const rest = await svc.runs.list({ workflow: 'greet', cursor: page.next });
      expect(rest).toHaveLength(1);
      expect(rest.next).toBeUndefined();
      expect([page[0]!.runId, rest[0]!.runId].sort()).toEqual([greet.runId, emitted.runIds[0]!].sort());
      expect((await svc.runs.get(greet.runId)).steps.map((s) => s.name)).toEqual(['hello']);
      expect((await svc.runs.explain(greet.runId)).status).toBe('succeeded');

      await expect(svc.trigger('nope')).rejects.toThrow(UnknownWorkflowError);
      await expect(svc.signal(approval.runId, 'bad#name')).rejects.toThrow(ValidationError);
      await expect(svc.runs.list({ limit: 0 })).rejects.toThrow(/^runs\.list filter\.limit: /);

      // A capability step parks in the service; only the app's 'work' provider serves it.
      const first = await svc.trigger('scrape', { url: 'https://intranet/a' });
      const parked = await until('scrape parks', async () => {
        const x = await svc.runs.explain(first.runId);
        if (x.status === 'failed') throw new Error(x.summary);
        return x.status === 'parked' ? x : undefined;
      });
      expect(parked.waitingFor).toMatchObject({ kind: 'capability', capability: 'browser.scrape', affinity: { partition: 'work' } });
      expect(parked.next).toContain(`engine.capabilities.provide('browser.scrape', {"partition":"work"}, handler)`);
      const wrongCalls: unknown[] = [];
      await svc.capabilities.provide('browser.scrape', { partition: 'home' }, (input) => {
        wrongCalls.push(input);
        return { wrong: true };
      });
      const served: string[] = [];
      await svc.capabilities.provide('browser.scrape', { partition: 'work' }, (input, info) => {
        served.push(info.runId);
        if ((input as { url: string }).url.endsWith('/refuse')) throw new TerminalError('the user closed the login prompt');
        return { by: process.pid, key: info.idempotencyKey, url: (input as { url: string }).url };
      });
      expect(await svc.result(first.runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: { by: process.pid, key: `${first.runId}/browser.scrape`, url: 'https://intranet/a' } });
      expect(child.pid).not.toBe(process.pid);
      // A TerminalError thrown here is the step's TerminalError in the service.
      const refusedRun = await svc.trigger('scrape', { url: 'https://intranet/refuse' });
      const failed = await svc.result(refusedRun.runId, { timeout: '20s' });
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ name: 'TerminalError', message: 'the user closed the login prompt' });
      expect(served).toEqual([first.runId, refusedRun.runId]);

      // Withdrawn (the window closed): the next run parks again.
      const workProvider = svc.capabilities.list().findIndex((p) => p.attrs.partition === 'work');
      expect(workProvider).toBe(1);
      await svc.close();
      const later = await svc.trigger('scrape', { url: 'https://intranet/b' });
      await until('the next run parks', async () => ((await svc.runs.explain(later.runId)).status === 'parked' ? true : undefined));

      // Cancel and retry through the handle.
      const dropped = await svc.trigger('approval');
      await until('approval waits', async () => ((await svc.runs.explain(dropped.runId)).status === 'waiting' ? true : undefined));
      await svc.runs.cancel(dropped.runId);
      expect(await svc.result(dropped.runId, { timeout: '20s' })).toMatchObject({ status: 'cancelled' });

      // The service restarts (stopped by pid, started again): the run stays parked through it,
      // and a provider registered with the new serve (a new handle, as after the app restarted)
      // resumes it; the old handle follows the new serve too.
      const home = await attach({ dataDir });
      await home.capabilities.provide('browser.scrape', { partition: 'home' }, (input) => {
        wrongCalls.push(input);
        return { wrong: true };
      });
      process.kill(child.pid!, 'SIGTERM');
      expect(await exit).toBe(0);
      expect(svc.connected()).toBe(false);
      const next = await startServe(dataDir);
      expect(findService(dataDir)?.pid).toBe(next.child.pid);
      expect((await svc.runs.explain(later.runId)).waitingFor).toMatchObject({ kind: 'capability', capability: 'browser.scrape', affinity: { partition: 'work' } });
      const again = await attach({ dataDir });
      try {
        await again.capabilities.provide('browser.scrape', { partition: 'work' }, (input, info) => {
          served.push(info.runId);
          return { by: process.pid, key: 'again', url: (input as { url: string }).url };
        });
        expect(await again.result(later.runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: { key: 'again', url: 'https://intranet/b' } });
        // The failed run retried through the handle: served again, now successfully.
        const retried = await again.runs.retry(refusedRun.runId);
        expect(retried).toEqual({ from: { seq: 0, name: 'browser.scrape' }, discarded: [{ seq: 0, name: 'browser.scrape', kind: 'use', status: 'failed' }] });
        expect(await again.result(refusedRun.runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: { key: 'again', url: 'https://intranet/refuse' } });
        expect(served).toEqual([first.runId, refusedRun.runId, later.runId, refusedRun.runId]);
        // The 'home' provider (its handle kept across the restart) never ran.
        expect(home.capabilities.list()).toEqual([{ capability: 'browser.scrape', attrs: { partition: 'home' } }]);
        expect(wrongCalls).toEqual([]);
      } finally {
        await again.close();
        await home.close();
        process.kill(next.child.pid!, 'SIGTERM');
        expect(await next.exit).toBe(0);
      }
    } finally {
      await svc.close();
    }
    expect(svc.connected()).toBe(false);
  }, 60_000);
});

// Both backends side by side (SQLite is cheap): the same frames give the same run.
describe.each(['sqlite', 'restate'] as const)('an attached app that goes away (%s)', (backend) => {
  it('its provider is withdrawn when it stops polling, the call it held parks the run, and a provider that comes back serves it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), `tranquil-attach-gone-${backend}-`));
    dirs.push(dataDir);
    // The serve's own parts, in this process, with a short provider lease; the "app" is raw frames.
    const engine = await createEngine({ backend, dataDir, workflows: hostConfig.workflows });
    await engine.start();
    const control = await startControl(engine, dataDir, { providerLeaseMs: 300 });
    try {
      const op = (o: Op) => sendOp(control.info, o);
      const { providerId } = (await op({ op: 'provide', capability: 'browser.scrape', attrs: { partition: 'work' } })) as { providerId: string };
      // Polling before the trigger: a waiting poll holds the 300 ms lease, which a trigger on
      // a loaded machine (another test file beside this one) can outlast.
      const polled = op({ op: 'poll', providerId, waitMs: 10_000 }) as Promise<{ calls: { callId: string; runId: string; idempotencyKey: string }[] }>;
      const { runId } = await engine.trigger('scrape', { url: 'https://intranet/c' });
      const got = await polled;
      expect(got.calls).toHaveLength(1);
      expect(got.calls[0]).toMatchObject({ runId, idempotencyKey: `${runId}/browser.scrape` });
      // The app dies holding the call: the lease runs out, the step parks (not failed, not an attempt).
      const parked = await until('parks', async () => {
        const x = await engine.runs.explain(runId);
        if (x.status === 'failed') throw new Error(x.summary);
        return x.status === 'parked' ? x : undefined;
      });
      expect(parked.waitingFor).toMatchObject({ kind: 'capability', capability: 'browser.scrape', affinity: { partition: 'work' } });
      expect(engine.capabilities.list()).toEqual([]);
      await expect(op({ op: 'answer', providerId, callId: got.calls[0]!.callId, result: 1 })).rejects.toThrow(ValidationError);
      // The app comes back: a new provider serves the parked run, with the same key.
      const again = (await op({ op: 'provide', capability: 'browser.scrape', attrs: { partition: 'work' } })) as { providerId: string };
      const call = (await op({ op: 'poll', providerId: again.providerId, waitMs: 10_000 })) as { calls: { callId: string; idempotencyKey: string }[] };
      expect(call.calls.map((c) => c.idempotencyKey)).toEqual([`${runId}/browser.scrape`]);
      await op({ op: 'answer', providerId: again.providerId, callId: call.calls[0]!.callId, result: { by: 0, key: 'back', url: 'https://intranet/c' } });
      expect(await engine.result(runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: { key: 'back' } });
      expect((await engine.runs.get(runId)).steps).toMatchObject([{ name: 'browser.scrape', kind: 'use', status: 'succeeded', attempts: 1 }]);
    } finally {
      await control.stop();
      await engine.stop();
    }
  }, 30_000);
});
