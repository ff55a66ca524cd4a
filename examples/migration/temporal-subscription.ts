// The Temporal example of docs/migrate-temporal.md, ported: activities -> steps (each with the
// step's idempotency key), the cancel signal + condition(fn, timeout) -> step.waitForEvent with
// a timeout (the signal is kept until a wait takes it, so a cancel sent while a billing child
// runs ends the next wait), executeChild -> step.invoke, the status query -> the run's own
// record (engine.runs.get / explain), the workflow ID -> the run id.
// Test: test/recipes/migrate-temporal.test.ts.
import { TimeoutError, workflow, type StepApi } from '@tranquil/sdk';

export interface Billing {
  sendEmail(to: string, what: string, key: string): Promise<void>;
  chargeCard(customer: string, period: number, key: string): Promise<string>;
}

/** Temporal's retry policy for the activities: 1 s, doubling, 5 attempts in all. */
const activityOptions = { retries: { maxAttempts: 5, delay: '1s', backoff: 'exponential', jitter: false }, timeout: '1m' } as const;

/** condition(() => cancelled, timeout): true when the cancel signal came within `timeout`. */
async function cancelledWithin(step: StepApi, timeout: string): Promise<boolean> {
  try {
    await step.waitForEvent('cancel', { timeout });
    return true;
  } catch (err) {
    if (err instanceof TimeoutError) return false;
    throw err;
  }
}

export function subscriptionWorkflows(billing: Billing) {
  const billingPeriod = workflow<{ email: string; period: number }, string>('billing-period', (w) => {
    w.defaults(activityOptions);
    w.run(async ({ input, step }) => {
      const receipt = await step.do('charge', ({ idempotencyKey }) => billing.chargeCard(input.email, input.period, idempotencyKey));
      await step.do('receipt', ({ idempotencyKey }) => billing.sendEmail(input.email, `receipt ${receipt}`, idempotencyKey));
      return receipt;
    });
  });

  const subscription = workflow<{ email: string; periods: number }, 'cancelled' | 'completed'>('subscription', (w) => {
    w.defaults(activityOptions);
    w.run(async ({ input, step }) => {
      await step.do('welcome', ({ idempotencyKey }) => billing.sendEmail(input.email, 'welcome', idempotencyKey));
      if (await cancelledWithin(step, '14d')) {
        await step.do('cancelled-in-trial', ({ idempotencyKey }) => billing.sendEmail(input.email, 'sorry to see you go', idempotencyKey));
        return 'cancelled';
      }
      let cancelled = false;
      for (let period = 1; period <= input.periods && !cancelled; period++) {
        await step.invoke(`bill-${period}`, billingPeriod, { email: input.email, period });
        cancelled = await cancelledWithin(step, '30d');
      }
      await step.do('goodbye', ({ idempotencyKey }) => billing.sendEmail(input.email, 'goodbye', idempotencyKey));
      return cancelled ? 'cancelled' : 'completed';
    });
  });
  return { subscription, billingPeriod };
}
