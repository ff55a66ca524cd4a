// The ported DBOS example (examples/migration/dbos-checkout.ts) behaves as docs/migrate-dbos.md
// says: the workflow ID as run id (a second start is the same run), the payment as a signal to
// that run, the shipping child awaited, the day's sleep, the unpaid order released after the
// hour (DBOS.recv's null), and a flaky reserve retried with one idempotency key.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { checkoutWorkflows, orderRunId, type Shop } from '../../examples/migration/dbos-checkout.ts';

function shop(failReserves = 0) {
  const calls: string[] = [];
  const s: Shop = {
    reserve: async (id, key) => {
      calls.push(`reserve ${id} ${key}`);
      if (failReserves-- > 0) throw new Error('stock service busy');
    },
    release: async (id) => void calls.push(`release ${id}`),
    ship: async (id) => (calls.push(`ship ${id}`), `trk-${id}`),
    survey: async (id) => void calls.push(`survey ${id}`),
  };
  return { s, calls };
}

describe('migration from DBOS: the ported example', () => {
  it('paid: one run per workflow ID, payment signal, the child ships, the survey a day later', async () => {
    const { s, calls } = shop();
    const { checkout, ship } = checkoutWorkflows(s);
    const t = await createTestEngine({ workflows: [checkout, ship] });
    expect(await t.engine.trigger('checkout', { orderId: '42' }, { runId: orderRunId('42') })).toEqual({ runId: 'order-42', created: true });
    expect((await t.engine.trigger('checkout', { orderId: '42' }, { runId: orderRunId('42') })).created).toBe(false);
    await t.idle();
    expect((await t.engine.runs.get('order-42')).status).toBe('waiting');
    await t.engine.signal('order-42', 'payment', { paymentId: 'p-9' });
    await t.idle();
    expect((await t.engine.runs.get('order-42:ship')).output).toBe('trk-42'); // the child's run id: <parent>:<step>
    expect(calls).toEqual(['reserve 42 order-42/reserve', 'ship 42']);
    await t.advance('1d');
    expect(await t.engine.runs.get('order-42')).toMatchObject({ status: 'succeeded', output: { paid: true, paymentId: 'p-9', tracking: 'trk-42' } });
    expect(calls.at(-1)).toBe('survey 42');
    await t.close();
  });

  it('unpaid for an hour: released; a flaky reserve retried with the same idempotency key', async () => {
    const { s, calls } = shop(2);
    const { checkout, ship } = checkoutWorkflows(s);
    const t = await createTestEngine({ workflows: [checkout, ship] });
    await t.engine.trigger('checkout', { orderId: '7' }, { runId: orderRunId('7') });
    await t.advance('3s'); // two failed attempts, 1 s then 2 s apart
    expect(calls).toEqual(['reserve 7 order-7/reserve', 'reserve 7 order-7/reserve', 'reserve 7 order-7/reserve']);
    await t.advance('1h');
    expect(await t.engine.runs.get('order-7')).toMatchObject({ status: 'succeeded', output: { paid: false } });
    expect(calls.at(-1)).toBe('release 7');
    await t.close();
  });
});
