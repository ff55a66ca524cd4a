// Restate backend security: every listener (restate-server ingress/admin/node and the SDK
// endpoint) is bound to 127.0.0.1 only, checked from the kernel's socket table (no traffic
// to other addresses), and the endpoint refuses requests not signed by our restate-server.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-sec-'));
let engine: Engine;
beforeAll(async () => {
  const wf = workflow('guarded', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.do('x', () => 1));
  });
  engine = await createEngine({ backend: 'restate', dataDir: dir, workflows: [wf] });
  await engine.start();
}, 60_000);
afterAll(async () => {
  await engine?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** Local addresses (hex ip:port) of LISTEN sockets from /proc/net/tcp and tcp6. */
function listeners(): { ip: string; port: number }[] {
  const out: { ip: string; port: number }[] = [];
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] !== '0A') continue; // LISTEN
      const [ip, port] = cols[1]!.split(':');
      out.push({ ip: ip!, port: parseInt(port!, 16) });
    }
  }
  return out;
}

it('restate-server and the SDK endpoint listen on 127.0.0.1 only', () => {
  const ports = JSON.parse(readFileSync(join(dir, 'restate', 'ports.json'), 'utf8')) as Record<string, number>;
  const endpoint = Number(readFileSync(join(dir, 'restate', 'endpoint-port'), 'utf8'));
  const all = listeners();
  for (const port of [...Object.values(ports), endpoint]) {
    const mine = all.filter((l) => l.port === port);
    expect(mine.length, `port ${port} listens`).toBeGreaterThan(0);
    for (const l of mine) expect(l.ip, `port ${port}`).toBe('0100007F'); // 127.0.0.1, little-endian hex
  }
});

it('the SDK endpoint refuses requests that restate-server did not sign', async () => {
  const endpoint = Number(readFileSync(join(dir, 'restate', 'endpoint-port'), 'utf8'));
  const http2 = await import('node:http2');
  const status = await new Promise<number>((resolve, reject) => {
    const client = http2.connect(`http://127.0.0.1:${endpoint}`);
    client.on('error', reject);
    const req = client.request({ ':method': 'GET', ':path': '/discover', accept: 'application/vnd.restate.endpointmanifest.v3+json' });
    req.on('response', (h) => {
      resolve(Number(h[':status']));
      client.close();
    });
    req.on('error', reject);
    req.end();
  });
  expect(status).toBe(401);
  // ...while runs signed by our server go through.
  const { runId } = await engine.trigger('guarded', null);
  expect((await engine.result(runId, { timeout: '30s' })).status).toBe('succeeded');
});

it('the request-identity private key is owner-only', () => {
  expect(statSync(join(dir, 'restate', 'request-identity.pem')).mode & 0o777).toBe(0o600);
});
