// The DBOS Transact example of docs/migrate-dbos.md, ported: DBOS.runStep -> step.do (with the
// step's idempotency key), DBOS.recv with a timeout -> step.waitForEvent (a TimeoutError, not
// null), DBOS.setEvent -> the run's own status and steps (engine.runs.get), a child started on a
// queue and awaited -> step.invoke, DBOS.sleep -> step.sleep, the workflow ID -> the run id.
// Test: test/recipes/migrate-dbos.test.ts.
import { manual, TimeoutError, workflow } from '@tranquil/sdk';

export interface Shop {
  reserve(orderId: string, key: string): Promise<void>;
  release(orderId: string, key: string): Promise<void>;
  ship(orderId: string, key: string): Promise<string>;
  survey(orderId: string, key: string): Promise<void>;
}

/** DBOS's workflow ID becomes the run id: the app starts (and signals) `order-<id>`. */
export const orderRunId = (orderId: string) => `order-${orderId}`;

export function checkoutWorkflows(shop: Shop) {
  const ship = workflow<{ orderId: string }, string>('ship', (w) => {
    w.run(({ input, step }) => step.do('ship', ({ idempotencyKey }) => shop.ship(input.orderId, idempotencyKey)));
  });

  const checkout = workflow<{ orderId: string }>('checkout', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => {
      // DBOS: retriesAllowed, maxAttempts 5, intervalSeconds 1, backoffRate 2 (no jitter there).
      await step.do('reserve', { retries: { maxAttempts: 5, delay: '1s', backoff: 'exponential', jitter: false } },
        ({ idempotencyKey }) => shop.reserve(input.orderId, idempotencyKey));
      let payment: { paymentId: string };
      try {
        payment = await step.waitForEvent<{ paymentId: string }>('payment', { timeout: '1h' });
      } catch (err) {
        if (!(err instanceof TimeoutError)) throw err;
        await step.do('release', ({ idempotencyKey }) => shop.release(input.orderId, idempotencyKey));
        return { paid: false as const };
      }
      const tracking = await step.invoke('ship', ship, { orderId: input.orderId });
      await step.sleep('a-day-later', '1d');
      await step.do('survey', ({ idempotencyKey }) => shop.survey(input.orderId, idempotencyKey));
      return { paid: true as const, paymentId: payment.paymentId, tracking };
    });
  });
  return { checkout, ship };
}
