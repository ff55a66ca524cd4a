// The Express recipe (examples/recipes/express.ts) on a real SQLite file, over real HTTP on
// 127.0.0.1 (the app on an ephemeral port; the webhook is its own route): the host scenario
// (host-scenario.ts), then a restart on the same data dir keeps the runs and the webhook
// secret handed out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { start } from '../../examples/recipes/express.ts';
import { hostScenario, httpCall, httpDeliver, recordingWarehouse } from './host-scenario.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-express-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('recipe: the engine in an Express app', () => {
  it('webhook on the app\'s route to a finished run, manual start, status; a restart keeps runs and the hook secret', async () => {
    const { warehouse, calls } = recordingWarehouse();
    const host = await start({ dataDir, warehouse, port: 0 });
    let hook: string;
    try {
      expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await hostScenario(host.engine, httpCall(host.url), () => calls, { base: host.url, deliver: httpDeliver });
      hook = await host.engine.webhookUrl('fulfil', { base: 'https://shop.example/hooks' });
      expect(await httpCall(host.url)('POST', '/orders', undefined)).toMatchObject({ status: 400 });
    } finally {
      await host.close();
    }
    const again = await start({ dataDir, warehouse, port: 0 });
    try {
      expect(await again.engine.webhookUrl('fulfil', { base: 'https://shop.example/hooks' })).toBe(hook);
      // The provider redelivers evt_1 to the restarted app: the first run, nothing new.
      const redelivered = await httpDeliver(hook.replace('https://shop.example', again.url), JSON.stringify({ orderId: 'a1', amount: 12.5 }), {
        'content-type': 'application/json',
        'idempotency-key': 'evt_1',
      });
      expect(redelivered.status).toBe(202);
      expect(await redelivered.json()).toMatchObject({ created: false });
      expect(await httpCall(again.url)('GET', '/runs/fulfil-b2')).toMatchObject({ status: 200, json: { status: 'succeeded' } });
      expect(calls).toHaveLength(4); // nothing ran again
    } finally {
      await again.close();
    }
  });
});
