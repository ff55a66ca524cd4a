// Recipe: the engine inside a Hono app. The app starts a run per order (the order id is the
// run id, so a retried request starts nothing new), a payment provider's webhook signals the
// run, a status route asks the run to explain itself, and the Runs panel is mounted under
// /tranquil. The workflow reserves stock, waits up to an hour for the payment, then ships, or
// releases the stock when the payment never comes. A supplier's delivery notes start runs
// through the engine's own webhook handling, mounted as the app's route
// /hooks/<workflow>/<secret> (engine.handleWebhook takes Hono's fetch Request as is; the
// engine opens no port of its own with `webhook: { listen: false }`).
// Test: test/recipes/hono.test.ts.
import { Hono } from 'hono';
import { createPanel, UnknownRunError, type Engine } from '@tranquil/engine';
import * as z from 'zod';
import { manual, TimeoutError, webhook, workflow } from '@tranquil/sdk';

export interface Shop {
  reserve(orderId: string, items: string[], key: string): Promise<string>;
  release(reservation: string, key: string): Promise<void>;
  ship(orderId: string, key: string): Promise<string>;
  restock(sku: string, qty: number, key: string): Promise<void>;
}

/** A supplier's delivery note, as its webhook posts it. */
const Delivery = z.object({ sku: z.string().min(1), qty: z.number().int().positive() });

/** POST <engine.webhookUrl('restock', { base: 'https://<your app>/hooks' })> with a Delivery:
 *  a body the schema refuses is a 400 and no run; a redelivery (Idempotency-Key) the first run. */
export function restockWorkflow(shop: Shop) {
  return workflow('restock', { input: Delivery }, (w) => {
    w.trigger(webhook({ path: 'deliveries' }));
    w.run(async ({ input, step }) => {
      await step.do('restock', ({ idempotencyKey }) => shop.restock(input.sku, input.qty, idempotencyKey));
      return { sku: input.sku, added: input.qty };
    });
  });
}

export function orderWorkflow(shop: Shop) {
  return workflow<{ orderId: string; items: string[] }>('order', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => {
      const reservation = await step.do('reserve', ({ idempotencyKey }) => shop.reserve(input.orderId, input.items, idempotencyKey));
      try {
        const payment = await step.waitForEvent<{ paymentId: string }>('paid', { timeout: '1h' });
        const tracking = await step.do('ship', ({ idempotencyKey }) => shop.ship(input.orderId, idempotencyKey));
        return { paid: payment.paymentId, tracking };
      } catch (err) {
        if (!(err instanceof TimeoutError)) throw err;
        await step.do('release', ({ idempotencyKey }) => shop.release(reservation, idempotencyKey));
        return { paid: null, released: reservation };
      }
    });
  });
}

const runIdOf = (orderId: string) => `order-${orderId}`;

export async function createApp(engine: Engine): Promise<Hono> {
  const app = new Hono();
  app.post('/orders', async (c) => {
    const body = await c.req.json<{ orderId: string; items: string[] }>();
    const { runId, created } = await engine.trigger('order', body, { runId: runIdOf(body.orderId) });
    return c.json({ runId, created }, created ? 201 : 200);
  });
  // The engine's webhooks (secret URL, body limit, schema, Idempotency-Key): Hono's request
  // is a fetch Request, and handleWebhook answers with a fetch Response.
  app.post('/hooks/:workflow/:secret', (c) => engine.handleWebhook(c.req.raw));
  // The payment provider's webhook (verify its signature here in a real app).
  app.post('/webhooks/payments', async (c) => {
    const body = await c.req.json<{ orderId: string; paymentId: string }>();
    await engine.signal(runIdOf(body.orderId), 'paid', { paymentId: body.paymentId });
    return c.body(null, 204);
  });
  app.get('/orders/:id', async (c) => {
    const runId = runIdOf(c.req.param('id'));
    const [run, why] = await Promise.all([engine.runs.get(runId), engine.runs.explain(runId)]);
    return c.json({ status: run.status, output: run.output ?? null, why: why.summary });
  });
  app.onError((err, c) => (err instanceof UnknownRunError ? c.json({ error: err.message }, 404) : c.json({ error: err.message }, 500)));
  // The Runs panel under /tranquil; who may reach it is the app's decision (auth middleware here).
  const panel = await createPanel(engine, { basePath: '/tranquil' });
  app.route('/', panel.app);
  return app;
}
