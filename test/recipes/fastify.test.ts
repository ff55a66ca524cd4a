// The Fastify recipe (examples/recipes/fastify.ts) on a real SQLite file, over real HTTP on
// 127.0.0.1 (the app on an ephemeral port; the webhook is its own route): the host
// scenario (host-scenario.ts); app.close() stops the engine too (its onClose hook), so a
// second start on the same data dir gets the lease and finds the finished runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { start } from '../../examples/recipes/fastify.ts';
import { hostScenario, httpCall, httpDeliver, recordingWarehouse } from './host-scenario.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-fastify-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('recipe: the engine in a Fastify app', () => {
  it('webhook on the app\'s route to a finished run, manual start, status; close stops the engine', async () => {
    const { warehouse, calls } = recordingWarehouse();
    const { app, url } = await start({ dataDir, warehouse, port: 0 });
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await hostScenario(app.engine, httpCall(url), () => calls, { base: url, deliver: httpDeliver });
      const badJson = await fetch(`${url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":' });
      expect(badJson.status).toBe(400);
    } finally {
      await app.close();
    }
    const again = await start({ dataDir, warehouse, port: 0 });
    try {
      expect(await httpCall(again.url)('GET', '/runs/fulfil-b2')).toMatchObject({ status: 200, json: { status: 'succeeded' } });
      expect(calls).toHaveLength(4); // nothing ran again
    } finally {
      await again.app.close();
    }
  });
});
