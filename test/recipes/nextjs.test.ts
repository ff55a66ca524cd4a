// The Next.js recipe (examples/recipes/nextjs/) without next itself (not installed: too large
// for a dev dependency; see the recipe's README): its App Router handlers are called as Next
// calls them, with web Request objects (and the dynamic segment as a promise), after the
// instrumentation hook started the engine singleton on a real SQLite file. The webhook is the
// app's route handler too (engine.handleWebhook), and the steps call a warehouse HTTP
// server on 127.0.0.1 (WAREHOUSE_URL) with their idempotency keys.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../examples/recipes/nextjs/instrumentation.ts';
import { getEngine, stopEngine } from '../../examples/recipes/nextjs/lib/engine.ts';
import { POST as postOrder } from '../../examples/recipes/nextjs/app/api/orders/route.ts';
import { GET as getRun } from '../../examples/recipes/nextjs/app/api/runs/[id]/route.ts';
import { POST as postHook } from '../../examples/recipes/nextjs/app/api/hooks/[workflow]/[secret]/route.ts';
import { hostScenario, type Call, type Deliver } from './host-scenario.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-next-'));
const calls: string[] = [];
let warehouse: Server;

// The warehouse: records each call once per idempotency key (a redelivery gets the same id);
// refuses order 'c3' with a 422 (a final answer).
beforeAll(async () => {
  const ids = new Map<string, string>();
  warehouse = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text) as { orderId: string; amount?: number };
    if (body.orderId === 'c3') return void res.writeHead(422).end('order c3 is blocked');
    const key = String(req.headers['idempotency-key']);
    if (!ids.has(key)) {
      const kind = req.url === '/invoices' ? 'invoice' : 'ship';
      calls.push(kind === 'invoice' ? `invoice ${body.orderId} ${body.amount}` : `ship ${body.orderId}`);
      ids.set(key, `${kind === 'invoice' ? 'inv' : 'trk'}-${body.orderId}`);
    }
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: ids.get(key) }));
  }).listen(0, '127.0.0.1');
  await once(warehouse, 'listening');
  process.env.WAREHOUSE_URL = `http://127.0.0.1:${(warehouse.address() as AddressInfo).port}`;
  process.env.TRANQUIL_DATA_DIR = dataDir;
  process.env.NEXT_RUNTIME = 'nodejs';
});
afterAll(async () => {
  await stopEngine();
  warehouse.closeAllConnections();
  await new Promise((r) => warehouse.close(r));
  rmSync(dataDir, { recursive: true, force: true });
});

// What Next does for a request to a route: the handler with a web Request and, for a dynamic
// segment, { params: Promise<{ id }> }.
const call: Call = async (method, path, body) => {
  const request = new Request(`http://localhost:3000${path}`, body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const run = /^\/api\/runs\/([^/]+)$/.exec(path);
  let res: Response;
  if (method === 'POST' && path === '/api/orders') res = await postOrder(request);
  else if (method === 'GET' && run) res = await getRun(request, { params: Promise.resolve({ id: decodeURIComponent(run[1]!) }) });
  else throw new Error(`no route for ${method} ${path}`);
  return { status: res.status, json: await res.json() };
};

// A delivery as Next routes it: only /api/hooks/<workflow>/<secret> reaches the hook handler.
const deliver: Deliver = async (url, body, headers) => {
  if (!/^http:\/\/localhost:3000\/api\/hooks\/[^/]+\/[^/]+$/.test(url)) throw new Error(`no route for POST ${url}`);
  return postHook(new Request(url, { method: 'POST', headers, body }));
};

describe('recipe: the engine in Next.js App Router route handlers', () => {
  it('instrumentation starts the one engine; webhook to a finished run, manual start, status', async () => {
    await register();
    const engine = await getEngine();
    expect(await getEngine()).toBe(engine); // the singleton: every route gets the same engine
    await hostScenario(engine, call, () => calls, { base: 'http://localhost:3000/api', deliver, orders: '/api/orders', runs: '/api/runs' });
    const notJson = await postOrder(new Request('http://localhost:3000/api/orders', { method: 'POST', body: '{' }));
    expect(notJson.status).toBe(400);
  });

  it("a warehouse 4xx is final: the run fails on the first attempt, the status route says why", async () => {
    expect(await call('POST', '/api/orders', { orderId: 'c3', amount: 1 })).toMatchObject({ status: 201 });
    const view = await (await getEngine()).result('fulfil-c3', { timeout: '20s' });
    expect(view.status).toBe('failed');
    expect(view.steps.find((s) => s.name === 'invoice')?.attempts).toBe(1);
    const status = await call('GET', '/api/runs/fulfil-c3');
    expect(status.json.status).toBe('failed');
    expect(status.json.why).toMatch(/422/);
  });

  it('stopEngine releases the data dir; the next request starts a fresh engine on the same runs', async () => {
    await stopEngine();
    expect(await call('GET', '/api/runs/fulfil-b2')).toMatchObject({ status: 200, json: { status: 'succeeded' } });
  });
});
