// What held in issue 36's review keeps holding, with table items 1, 3 and 4 reached at run
// time (computed specifiers, web storage), end to end on both backends and with the OS
// sandbox on and off (layers 1-2 and Deno's permissions alone): one hostile file, approved
// with NO grants, probes every way out from one step; each probe must be refused with
// Deno's own message and no secret may come back. Real Deno child, real restate-server.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
let server: Server;
let port = 0;
beforeAll(async () => {
  // Another local listener (as the panel or the control port would be).
  server = createServer((s) => s.end('LISTENER-SECRET\n'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PROBE = `import { workflow, manual } from '@tranquil/sdk';
const D = (globalThis as any).Deno;
const probe = async (f: () => unknown) => {
  try { return 'GOT ' + JSON.stringify(await f()); } catch (e) { return String(e).split('\\n')[0]; }
};
export default workflow('prober', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => ({ ...(await step.do('probe', async () => ({
    read: await probe(() => D.readTextFile(input.dir + '/id_rsa')),
    write: await probe(() => D.writeTextFile(input.dir + '/planted', 'x')),
    env: await probe(() => D.env.get('HOME')),
    command: await probe(() => new D.Command('/bin/sh', { args: ['-c', 'id'] }).outputSync()),
    dlopen: await probe(() => D.dlopen('libc.so.6', {})),
    listener: await probe(async () => (await fetch('http://127.0.0.1:' + input.port + '/')).text()),
    ipv6: await probe(async () => (await fetch('http://[::1]:' + input.port + '/')).text()),
    connect: await probe(async () => (await D.connect({ hostname: '127.0.0.1', port: input.port })).close()),
    dns: await probe(() => D.resolveDns('example.com', 'A')),
    websocket: await probe(() => new Promise((resolve, reject) => {
      const ws = new WebSocket('ws://127.0.0.1:' + input.port + '/');
      ws.onopen = () => resolve('OPEN');
      ws.onerror = (e: any) => reject(new Error(e.message ?? 'websocket error'));
    })),
    importKey: await probe(async () => (await import(input.dir + '/id' + '_rsa', { with: { type: 'text' } })).default),
    importJson: await probe(async () => (await import(input.dir + '/serve' + '.json', { with: { type: 'json' } })).default),
    npm: await probe(() => import('npm:' + 'left-pad@1.3.0')),
    jsr: await probe(() => import('jsr:' + '@std/path')),
    storage: await probe(() => localStorage.setItem('k', 'v'.repeat(1000))),
    caches: await probe(async () => (await caches.open('c')).put('http://x/', new Response('y'))),
  }))),
    // Its own step: under bwrap, loading Node's compat layer ends deno (no /proc/self/exe).
    nodeFs: await step.do('node-fs', { retries: { limit: 1 } }, () => probe(async () => (await import('node:' + 'fs')).readFileSync(input.dir + '/id_rsa', 'utf8')))
      .catch((e: Error) => e.name + ': ' + e.message.split('\\n')[0]),
  }));
});
`;

const cases = [
  { backend: 'sqlite', sandbox: 'auto' },
  { backend: 'restate', sandbox: 'auto' },
  { backend: 'sqlite', sandbox: 'off' },
] as const;

describe.each(cases)('a file approved with no grants reaches nothing ($backend, deno.sandbox $sandbox)', ({ backend, sandbox }) => {
  it('every probe is refused with its reason; no secret comes back', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tranquil-held-'));
    dirs.push(root);
    mkdirSync(join(root, 'secret'));
    mkdirSync(join(root, 'flows'));
    writeFileSync(join(root, 'secret', 'id_rsa'), 'PRIVATE-KEY-MATERIAL\n', { mode: 0o600 });
    writeFileSync(join(root, 'secret', 'serve.json'), '{"token":"CONTROL-TOKEN"}\n', { mode: 0o600 });
    const file = join(root, 'flows', 'prober.ts');
    writeFileSync(file, PROBE);
    const engine = await createEngine({ backend, dataDir: join(root, 'data'), workflowFiles: [file], log: { level: 'silent' }, deno: { sandbox } });
    await engine.start();
    try {
      await engine.workflows.approve('prober');
      const { runId } = await engine.trigger('prober', { dir: join(root, 'secret'), port });
      const done = await engine.result(runId, { timeout: '90s' });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const out = done.output as Record<string, string>;
      const key = join(root, 'secret', 'id_rsa');
      expect(out).toMatchObject({
        read: expect.stringContaining(`Requires read access to "${key}"`),
        write: expect.stringContaining(`Requires write access to "${join(root, 'secret', 'planted')}"`),
        env: expect.stringContaining('Requires env access to "HOME"'),
        command: expect.stringContaining('Requires run access to "/bin/sh"'),
        dlopen: expect.stringContaining('Requires ffi access'),
        listener: expect.stringContaining(`Requires net access to "127.0.0.1:${port}"`),
        ipv6: expect.stringContaining(`Requires net access to "[::1]:${port}"`),
        connect: expect.stringContaining(`Requires net access to "127.0.0.1:${port}"`),
        // Deno asks for the name server's address (not there at all under bwrap without net).
        dns: expect.stringMatching(/Requires net access to|No such file or directory/),
        websocket: expect.stringContaining(`Requires net access to "127.0.0.1:${port}"`),
        importKey: expect.stringContaining(`Requires read access to "${key}"`),
        importJson: expect.stringContaining(`Requires read access to "${join(root, 'secret', 'serve.json')}"`),
        npm: expect.stringContaining('--no-npm is specified'),
        jsr: expect.stringContaining('--no-remote is specified'),
      });
      // A computed node: import: Deno checks the read, or (under bwrap) the child ends.
      expect(out.nodeFs).toMatch(sandbox === 'off' ? /Requires read access/ : /Requires read access|ChildCrashedError/);
      expect(out.storage).not.toMatch(/^GOT/);
      expect(out.caches).not.toMatch(/^GOT/);
      expect(JSON.stringify(out)).not.toMatch(/PRIVATE-KEY-MATERIAL|CONTROL-TOKEN|LISTENER-SECRET|uid=/);
    } finally {
      await engine.stop();
    }
  }, 150_000);
});
