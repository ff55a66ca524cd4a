// An operator's own tools see what docs/restate.md says they see: the real `restate` CLI
// (npm @restatedev/restate, the version pinned with the server) lists our runs as
// invocations of `tq_<workflow>` keyed by run id, our deployment, and the services (the
// workflow, its signal queue, the divergence object). A real restate-server.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';
import { readAdminFile } from '../../src/adapters/restate/server-process.ts';
import { removeDataDir } from './data-dir.ts';

const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('@restatedev/restate/package.json')), 'lib', 'index.js');
const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-opcli-'));
let engine: Engine | undefined;
afterAll(async () => {
  await engine?.stop().catch(() => {});
  removeDataDir(dir);
}, 30_000);

it('the restate CLI lists our runs as invocations of tq_<workflow>, one deployment, our services', async () => {
  const orders = workflow('orders', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.waitForEvent('go'));
  });
  engine = await createEngine({ backend: 'restate', dataDir: dir, workflows: [orders] });
  await engine.start();
  await engine.trigger('orders', null, { runId: 'order-42' });
  for (let i = 0; i < 500 && (await engine.runs.get('order-42')).status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 10));
  const restate = (...args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, RESTATE_ADMIN_URL: readAdminFile(dir)!.adminUrl, NO_COLOR: '1' }, encoding: 'utf8', timeout: 30_000 });

  expect(restate('invocations', 'list')).toContain('tq_orders/order-42/run');
  const deployments = restate('deployments', 'list');
  expect(deployments.match(/http:\/\/127\.0\.0\.1:\d+\/v\/[0-9a-f]{12}\//g)).toHaveLength(1);
  const services = restate('services', 'list');
  for (const s of ['tq_orders', 'tqsig_orders', 'tqdiverged']) expect(services).toContain(s);
  expect(services).toMatch(/tq_orders\s+\d+\s+workflow/);

  // What the operator does with it reaches the engine's view: cancel by invocation id.
  const id = /inv_[0-9A-Za-z]+/.exec(restate('invocations', 'list'))![0];
  restate('invocations', 'cancel', '--yes', id);
  expect((await engine.result('order-42', { timeout: '30s' })).status).toBe('cancelled');
}, 120_000);
