// The Hono recipe (examples/recipes/hono.ts) on the test engine, through real Hono requests
// (app.request, no socket): an order starts one run however often it is posted, the payment
// webhook moves it on to shipping, an unpaid order releases its stock after the hour, an
// unknown order is a 404, and the Runs panel answers under /tranquil; a supplier's delivery
// note through the app's /hooks route (engine.handleWebhook) starts one restock run per
// delivery, and a wrong secret or a bad body starts none.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { createApp, orderWorkflow, restockWorkflow, type Shop } from '../../examples/recipes/hono.ts';

function shop() {
  const calls: string[] = [];
  const s: Shop = {
    reserve: async (id, items) => (calls.push(`reserve ${id} ${items.join(',')}`), `res-${id}`),
    release: async (r) => void calls.push(`release ${r}`),
    ship: async (id) => (calls.push(`ship ${id}`), `track-${id}`),
    restock: async (sku, qty) => void calls.push(`restock ${sku} ${qty}`),
  };
  return { s, calls };
}

const post = (path: string, body: unknown) => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

describe('recipe: the engine in a Hono app', () => {
  it('order, duplicate post, payment webhook, status; unknown order 404; the panel mounted', async () => {
    const { s, calls } = shop();
    const t = await createTestEngine({ workflows: [orderWorkflow(s)] });
    const app = await createApp(t.engine);
    const first = await app.request('/orders', post('/orders', { orderId: 'a1', items: ['mug'] }));
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ runId: 'order-a1', created: true });
    expect((await app.request('/orders', post('/orders', { orderId: 'a1', items: ['mug'] }))).status).toBe(200);
    await t.idle();
    const waiting = (await (await app.request('/orders/a1')).json()) as { status: string; why: string };
    expect(waiting.status).toBe('waiting');
    expect(waiting.why).toMatch(/paid/);
    expect((await app.request('/webhooks/payments', post('', { orderId: 'a1', paymentId: 'p-9' }))).status).toBe(204);
    await t.idle();
    expect(await (await app.request('/orders/a1')).json()).toMatchObject({ status: 'succeeded', output: { paid: 'p-9', tracking: 'track-a1' } });
    expect(calls).toEqual(['reserve a1 mug', 'ship a1']);
    expect((await app.request('/webhooks/payments', post('', { orderId: 'zz', paymentId: 'p' }))).status).toBe(404);
    const panel = await app.request('/tranquil');
    expect(panel.status).toBe(200);
    expect(await panel.text()).toMatch(/order-a1/);
    await t.close();
  });

  it('an order never paid releases its stock after the hour', async () => {
    const { s, calls } = shop();
    const t = await createTestEngine({ workflows: [orderWorkflow(s)] });
    const app = await createApp(t.engine);
    await app.request('/orders', post('/orders', { orderId: 'b2', items: ['pen'] }));
    await t.advance('1h');
    expect(await (await app.request('/orders/b2')).json()).toMatchObject({ status: 'succeeded', output: { paid: null, released: 'res-b2' } });
    expect(calls).toEqual(['reserve b2 pen', 'release res-b2']);
    await t.close();
  });

  it("a supplier's webhook on the app's own route: 404 wrong secret, 400 bad body, one run per delivery", async () => {
    const { s, calls } = shop();
    const t = await createTestEngine({ workflows: [orderWorkflow(s), restockWorkflow(s)], webhook: { listen: false } });
    const app = await createApp(t.engine);
    expect(t.engine.webhookAddress).toBeUndefined(); // no port of the engine's own
    const hook = await t.engine.webhookUrl('restock', { base: '/hooks' });
    expect(hook).toMatch(/^\/hooks\/restock\/[\w-]{43}$/);
    const deliver = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      app.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
    expect((await deliver(hook.replace(/[\w-]+$/, 'guess'), { sku: 'mug', qty: 3 })).status).toBe(404);
    const bad = await deliver(hook, { sku: 'mug', qty: 0 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/qty/);
    const first = await deliver(hook.replace('/restock/', '/deliveries/'), { sku: 'mug', qty: 3 }, { 'idempotency-key': 'note-1' });
    expect(first.status).toBe(202);
    const { runId } = (await first.json()) as { runId: string };
    expect(await (await deliver(hook, { sku: 'mug', qty: 3 }, { 'idempotency-key': 'note-1' })).json()).toEqual({ runId, created: false });
    await t.idle();
    expect(await t.engine.runs.get(runId)).toMatchObject({ status: 'succeeded', output: { sku: 'mug', added: 3 } });
    expect(calls).toEqual(['restock mug 3']);
    await t.close();
    // A stopped engine takes nothing: 503, not a run the next start would not know about.
    expect((await deliver(hook, { sku: 'pen', qty: 1 })).status).toBe(503);
  });
});
