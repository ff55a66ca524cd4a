// The workflow and the HTTP answers the framework recipes (express.ts, fastify.ts, nextjs/)
// share: a payment provider's webhook starts the fulfilment of an order (the app's route
// /hooks/<workflow>/<secret> handed to engine.handleWebhook: secret URL, body checked by the
// input schema, Idempotency-Key dedup), the app's own routes start one by hand and report a
// run's status. Tests: test/recipes/
// express.test.ts, fastify.test.ts, nextjs.test.ts.
import * as z from 'zod';
import { manual, webhook, workflow } from '@tranquil/sdk';
import { UnknownRunError, ValidationError, type Engine } from '@tranquil/engine';

/** A payment as the provider posts it (and as the manual route takes it). */
export const Payment = z.object({ orderId: z.string().regex(/^[\w-]{1,64}$/, 'letters, digits, _ or -, at most 64'), amount: z.number().positive() });
export type Payment = z.infer<typeof Payment>;

export interface Warehouse {
  invoice(orderId: string, amount: number, key: string): Promise<string>;
  ship(orderId: string, key: string): Promise<string>;
}

export function fulfilment(warehouse: Warehouse) {
  return workflow('fulfil', { input: Payment }, (w) => {
    // POST <engine.webhookUrl('fulfil', { base })>; a body the schema refuses is a 400, nothing stored.
    w.trigger(webhook({ path: 'payments' }));
    w.trigger(manual());
    w.defaults({ retries: { limit: 5, delay: '1s' } });
    w.run(async ({ input, step }) => {
      const invoice = await step.do('invoice', ({ idempotencyKey }) => warehouse.invoice(input.orderId, input.amount, idempotencyKey));
      const tracking = await step.do('ship', ({ idempotencyKey }) => warehouse.ship(input.orderId, idempotencyKey));
      return { invoice, tracking };
    });
  });
}

/** The manual route: one run per order (the order id is the run id, so a retried POST starts
 *  nothing new): 201 when started, 200 when it already was, 400 naming a bad field. */
export async function startFulfilment(engine: Engine, body: unknown): Promise<{ status: number; body: unknown }> {
  const parsed = Payment.safeParse(body);
  if (!parsed.success) return { status: 400, body: { error: z.prettifyError(parsed.error).split('\n').join(' ') } };
  const { runId, created } = await engine.trigger('fulfil', parsed.data, { runId: `fulfil-${parsed.data.orderId}` });
  return { status: created ? 201 : 200, body: { runId, created } };
}

/** The status route: the run's status, output and its own one-line explanation. */
export async function runStatus(engine: Engine, runId: string): Promise<{ status: number; body: unknown }> {
  const [run, why] = await Promise.all([engine.runs.get(runId), engine.runs.explain(runId)]);
  return { status: 200, body: { runId, status: run.status, output: run.output ?? null, why: why.summary } };
}

/** An engine error as an HTTP answer: an unknown run is a 404, bad input a 400, the rest 500. */
export function errorAnswer(err: unknown): { status: number; body: { error: string } } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UnknownRunError) return { status: 404, body: { error: message } };
  if (err instanceof ValidationError) return { status: 400, body: { error: message } };
  return { status: 500, body: { error: 'internal error' } };
}
