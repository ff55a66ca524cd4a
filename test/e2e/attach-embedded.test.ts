// attach({ dataDir }) to an app that embeds the engine with `control: true` (no `tranquil
// serve`): the app is its own process (fixtures/embedded-app.ts), the test process is another
// part of it (or a second app). The embedded engine writes the same serve.json (0600,
// loopback, token) once it owns the data dir; another engine with `control: true` that is
// refused the dir leaves it alone; attach drives runs and serves a parked capability step
// from here; stopping the app (by pid) removes serve.json. The channel itself is the serve's
// (attach.test.ts, attach-restate.test.ts); this checks the engine option opens and closes it,
// on both backends.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { attach, BackendUnavailableError, createEngine, DataDirInUseError, findService } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { removeDataDir } from '../restate/data-dir.ts';
import { whenReady } from './ready-child.ts';

const APP = join(import.meta.dirname, 'fixtures', 'embedded-app.ts');

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  // An app killed above leaves its restate-server: removeDataDir stops it by its recorded pid.
  for (const d of dirs.splice(0)) removeDataDir(d);
});

async function startApp(dataDir: string, backend: string): Promise<{ child: ChildProcess; control: { host: string; port: number }; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', APP], { env: { ...process.env, DATA_DIR: dataDir, BACKEND: backend }, stdio: ['ignore', 'pipe', 'pipe'] });
  const app = await whenReady(child, children, 'app', (m) => (m.ready ? (m.control as { host: string; port: number }) : undefined));
  return { child, control: app.ready, exit: app.exit };
}

describe.each(['sqlite', 'restate'] as const)('an engine embedded with control: true (%s)', (backend) => {
  it('opens the control channel once it owns the dir, attach drives it, and stopping it closes the channel', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), `tranquil-attach-embedded-${backend}-`));
    dirs.push(dataDir);
    const { child, control, exit } = await startApp(dataDir, backend);
    const file = join(dataDir, 'serve.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: child.pid, host: '127.0.0.1', port: control.port });
    expect(findService(dataDir)).toEqual({ pid: child.pid, host: '127.0.0.1', port: control.port });

    // Another engine asking for a control channel is refused the dir and leaves serve.json alone.
    const noop = workflow('greet', (w) => {
      w.trigger(manual());
      w.run(async () => null);
    });
    const second = await createEngine({ backend, dataDir, workflows: [noop], control: true });
    const refused = await second.start().then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).pid).toBe(child.pid);
    expect(second.controlAddress).toBeUndefined();
    await second.stop().catch(() => {});
    expect(findService(dataDir)?.pid).toBe(child.pid);

    const app = await attach({ dataDir });
    try {
      expect(app.pid).toBe(child.pid);
      expect(app.backend).toBe(backend);
      expect([...app.workflows].sort()).toEqual(['greet', 'scrape']);
      const { runId } = await app.trigger('greet', { name: 'ada' });
      expect(await app.result(runId, { timeout: '20s' })).toMatchObject({ status: 'succeeded', output: 'hello ada' });
      // Values keep their shape over the wire (docs/values.md): a Date, a Map, a BigInt in the input.
      const typed = await app.trigger('greet', { name: 'bo', at: new Date(0), tags: new Map([['k', 1n]]) });
      const typedView = await app.result(typed.runId, { timeout: '20s' });
      expect(typedView).toMatchObject({ status: 'succeeded', output: 'hello bo' });
      expect(typedView.input).toEqual({ name: 'bo', at: new Date(0), tags: new Map([['k', 1n]]) });

      // A capability step parks in the app's engine; a provider in THIS process serves it.
      const parkedRun = await app.trigger('scrape', { url: 'https://intranet/a' });
      for (let i = 0; (await app.runs.get(parkedRun.runId)).status !== 'parked'; i++) {
        if (i > 500) throw new Error('never parked');
        await new Promise((r) => setTimeout(r, 20));
      }
      await app.capabilities.provide('browser.scrape', { partition: 'work' }, (input, info) => ({ by: process.pid, key: info.idempotencyKey, input }));
      expect(await app.result(parkedRun.runId, { timeout: '20s' })).toMatchObject({
        status: 'succeeded', output: { by: process.pid, key: `${parkedRun.runId}/browser.scrape`, input: { url: 'https://intranet/a' } },
      });
    } finally {
      await app.close();
    }

    // The app stops (by pid): its engine closes the channel and removes its serve.json.
    process.kill(child.pid!, 'SIGTERM');
    expect(await exit).toBe(0);
    expect(() => statSync(file)).toThrow(/ENOENT/);
    expect(findService(dataDir)).toBeUndefined();
    expect(app.connected()).toBe(false);
    await expect(app.runs.get('any-run')).rejects.toThrow(BackendUnavailableError);
  }, 30_000);
});
