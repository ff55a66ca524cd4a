// Security properties of the SQLite backend and the engine's listeners: webhook secrets are
// required and compared in constant time; listeners bind loopback unless told otherwise;
// the data dir and every database file are owner-only; one run's step results and errors
// never reach logs or another run's views.
import { createConnection } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { manual, TerminalError, webhook, workflow } from '@tranquil/sdk';
import { startControl } from '../../src/adapters/http/control-server.ts';
import { SERVE_FILE } from '../../src/adapters/http/control-protocol.ts';

const calls = vi.hoisted(() => ({ timingSafeEqual: [] as [number, number][] }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.timingSafeEqual.push([a.byteLength, b.byteLength]);
      return real.timingSafeEqual(a, b);
    },
  };
});

const open: (Engine | TestEngine)[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const e of open.splice(0)) await ('close' in e ? e.close() : e.stop()).catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  vi.restoreAllMocks();
});
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-sec-'));
  dirs.push(d);
  return d;
};

const hooked = workflow('hooked', (w) => {
  w.trigger(webhook({ path: 'inbound' }));
  w.run(async ({ input, step }) => step.do('echo', () => input));
});

describe('webhook secrets', () => {
  it('are required; wrong secrets of equal and unequal length and unknown workflows all get the same 404', async () => {
    const t = await createTestEngine({ workflows: [hooked] });
    open.push(t);
    const url = new URL(await t.engine.webhookUrl('hooked'));
    const secret = url.pathname.split('/')[3]!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
    const base = `http://127.0.0.1:${url.port}`;
    const flipped = (secret[0] === 'A' ? 'B' : 'A') + secret.slice(1);
    const answers = [];
    for (const path of [
      '/hooks/hooked', '/hooks/hooked/', `/hooks/hooked/${flipped}`, `/hooks/hooked/${secret.slice(0, 10)}`, `/hooks/hooked/${secret}x`,
      `/hooks/nope/${secret}`, `/hooks/inbound/${flipped}`,
    ]) {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      answers.push({ status: res.status, body: await res.text() });
    }
    expect(new Set(answers.map((a) => JSON.stringify(a)))).toEqual(new Set([JSON.stringify({ status: 404, body: '{"error":"not found"}' })]));
    expect(await t.engine.runs.list()).toEqual([]);
    const ok = await fetch(`${base}/hooks/hooked/${secret}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(ok.status).toBe(202);
  });

  it('are compared with crypto.timingSafeEqual on equal-length digests, whatever the length given', async () => {
    const t = await createTestEngine({ workflows: [hooked] });
    open.push(t);
    const url = new URL(await t.engine.webhookUrl('hooked'));
    const base = `http://127.0.0.1:${url.port}`;
    calls.timingSafeEqual.length = 0;
    for (const guess of ['x', 'y'.repeat(43), 'z'.repeat(500)]) {
      await fetch(`${base}/hooks/hooked/${guess}`, { method: 'POST', body: '' });
      await fetch(`${base}/hooks/nope/${guess}`, { method: 'POST', body: '' }); // unknown workflow: compared against a dummy
    }
    expect(calls.timingSafeEqual).toHaveLength(6);
    for (const [a, b] of calls.timingSafeEqual) expect([a, b]).toEqual([32, 32]);
    // And the module compares nothing by other means.
    const source = readFileSync(join(import.meta.dirname, '../../src/adapters/http/secret-compare.ts'), 'utf8');
    expect(source).not.toMatch(/===|!==|==|\.equals\(/);
  });
});

describe('listeners bind loopback', () => {
  const external = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  it('the webhook listener and the serve control endpoint listen on 127.0.0.1 by default', async () => {
    const dir = newDir();
    const e = await createEngine({ dataDir: dir, workflows: [hooked] });
    await e.start();
    open.push(e);
    expect(e.webhookAddress?.host).toBe('127.0.0.1');
    const control = await startControl(e, dir);
    try {
      expect(control.info.host).toBe('127.0.0.1');
    } finally {
      await control.stop();
    }
  });

  it.skipIf(!external)(
    external ? `neither is reachable on a non-loopback address (${external})` : 'not reachable on a non-loopback address [skipped: this machine has no non-loopback IPv4 interface]',
    async () => {
      const dir = newDir();
      const e = await createEngine({ dataDir: dir, workflows: [hooked] });
      await e.start();
      open.push(e);
      const control = await startControl(e, dir);
      try {
        for (const port of [e.webhookAddress!.port, control.info.port]) {
          const refused = await new Promise<string>((resolve) => {
            const s = createConnection({ host: external!, port }, () => (s.destroy(), resolve('connected')));
            s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
          });
          expect(refused, `port ${port} on ${external}`).toBe('ECONNREFUSED');
        }
      } finally {
        await control.stop();
      }
    },
  );

  it('binds elsewhere only when told to', async () => {
    const dir = newDir();
    const e = await createEngine({ dataDir: dir, workflows: [hooked], webhook: { host: '0.0.0.0', port: 0 } });
    await e.start();
    open.push(e);
    expect(e.webhookAddress?.host).toBe('0.0.0.0');
    // The URL handed out still points at loopback.
    expect(await e.webhookUrl('hooked')).toMatch(/^http:\/\/127\.0\.0\.1:/);
  });
});

describe('owner-only files', () => {
  for (const umask of [0o022, 0o000]) {
    it(`data dir 0700; database, -wal, -shm and serve.json 0600 (umask ${umask.toString(8).padStart(3, '0')})`, async () => {
      const old = process.umask(umask);
      try {
        const dir = join(newDir(), 'nested', 'data');
        const e = await createEngine({ dataDir: dir, workflows: [hooked] });
        await e.start();
        open.push(e);
        await e.trigger('hooked', { x: 1 });
        const control = await startControl(e, dir);
        const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
        try {
          expect(mode(dir)).toBe('700');
          for (const f of ['tranquil.db', 'tranquil.db-wal', 'tranquil.db-shm', SERVE_FILE]) expect(mode(join(dir, f)), f).toBe('600');
        } finally {
          await control.stop();
        }
      } finally {
        process.umask(old);
      }
    });
  }
});

describe('no leaks between runs', () => {
  it("a run's step results and errors reach neither the logs nor another run's views", async () => {
    const written: string[] = [];
    const capture = (s: unknown) => void written.push(String(s));
    for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const) vi.spyOn(console, m).mockImplementation((...a) => capture(a.join(' ')));
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (capture(s), true));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (capture(s), true));
    const secretive = workflow('secretive', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const token = await step.do('token', () => `TOKEN-${input.who}`);
        await step.do('flaky', { retries: { limit: 2, delay: 1, jitter: false } }, ({ attempt }) => {
          if (attempt === 1) throw new Error(`upstream said no to ERRSECRET-${input.who}`);
          return 'ok';
        });
        if (input.who === 'alice') throw new TerminalError(`alice failed with FAILSECRET-${token}`);
        return { token };
      });
    });
    const t = await createTestEngine({ workflows: [secretive] });
    open.push(t);
    const a = await t.engine.trigger('secretive', { who: 'alice' });
    const b = await t.engine.trigger('secretive', { who: 'bob' });
    await t.advance('1m');
    const viewA = await t.engine.runs.get(a.runId);
    const viewB = await t.engine.runs.get(b.runId);
    expect(viewA.status).toBe('failed');
    expect(viewB.status).toBe('succeeded');
    const bSide = JSON.stringify([viewB, await t.engine.runs.explain(b.runId), await t.engine.runs.list({ workflow: 'secretive', status: 'succeeded' })]);
    expect(bSide).not.toMatch(/alice/);
    const aSide = JSON.stringify([viewA, await t.engine.runs.explain(a.runId), await t.engine.runs.list({ status: 'failed' })]);
    expect(aSide).not.toMatch(/bob/);
    out.mockRestore();
    err.mockRestore();
    expect(written.join('\n')).not.toMatch(/TOKEN-|ERRSECRET-|FAILSECRET-/);
  });
});
