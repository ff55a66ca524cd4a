// The ported Temporal example (examples/migration/temporal-subscription.ts) behaves as
// docs/migrate-temporal.md says: the workflow ID as run id, the trial's cancel window, one
// billing child per period (run id <parent>:<step>), a cancel signal sent while nothing waits
// for it kept and ending the next wait, and the status read from the run's own record.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { subscriptionWorkflows, type Billing } from '../../examples/migration/temporal-subscription.ts';

function billing(hold?: { period: number; reached: () => void; until: Promise<void> }) {
  const mails: string[] = [];
  const b: Billing = {
    sendEmail: async (to, what) => void mails.push(`${to}: ${what}`),
    chargeCard: async (customer, period) => {
      if (period === hold?.period) {
        hold.reached();
        await hold.until;
      }
      return `${customer}#${period}`;
    },
  };
  return { b, mails };
}

describe('migration from Temporal: the ported example', () => {
  it('bills each period; a cancel sent while the second bill runs ends the subscription after it', async () => {
    let release!: () => void;
    let reached!: () => void;
    const charging = new Promise<void>((r) => (reached = r));
    const { b, mails } = billing({ period: 2, reached, until: new Promise<void>((r) => (release = r)) });
    const { subscription, billingPeriod } = subscriptionWorkflows(b);
    const t = await createTestEngine({ workflows: [subscription, billingPeriod] });
    await t.engine.trigger(subscription, { email: 'ada', periods: 3 }, { runId: 'sub-ada' });
    await t.advance('14d');
    expect((await t.engine.runs.get('sub-ada:bill-1')).output).toBe('ada#1');
    // The status query's place: the run's own record says what it waits for.
    expect((await t.engine.runs.explain('sub-ada')).summary).toMatch(/cancel/);
    const advancing = t.advance('30d'); // settles only when the held charge is released
    await charging;
    expect((await t.engine.runs.get('sub-ada:bill-2')).output).toBeUndefined(); // its charge is held
    await t.engine.signal('sub-ada', 'cancel'); // nobody waits for 'cancel' now: it is kept
    release();
    await advancing; // no further 30 days: the next wait takes the kept signal at once
    expect(await t.engine.runs.get('sub-ada')).toMatchObject({ status: 'succeeded', output: 'cancelled' });
    expect(mails).toEqual(['ada: welcome', 'ada: receipt ada#1', 'ada: receipt ada#2', 'ada: goodbye']);
    await t.close();
  });

  it('a cancel within the trial bills nothing; without one every period is billed', async () => {
    const { b, mails } = billing();
    const { subscription, billingPeriod } = subscriptionWorkflows(b);
    const t = await createTestEngine({ workflows: [subscription, billingPeriod] });
    await t.engine.trigger(subscription, { email: 'bo', periods: 2 }, { runId: 'sub-bo' });
    await t.engine.trigger(subscription, { email: 'cy', periods: 2 }, { runId: 'sub-cy' });
    await t.idle();
    await t.engine.signal('sub-bo', 'cancel');
    await t.advance('14d');
    await t.advance('30d');
    await t.advance('30d');
    expect((await t.engine.runs.get('sub-bo')).output).toBe('cancelled');
    expect((await t.engine.runs.get('sub-cy')).output).toBe('completed');
    expect(mails.filter((m) => m.startsWith('bo:'))).toEqual(['bo: welcome', 'bo: sorry to see you go']);
    expect(mails.filter((m) => m.startsWith('cy:'))).toEqual(['cy: welcome', 'cy: receipt cy#1', 'cy: receipt cy#2', 'cy: goodbye']);
    await t.close();
  });
});
