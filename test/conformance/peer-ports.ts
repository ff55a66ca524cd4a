// Conformance scenarios for the migration pages (docs/migrate-dbos.md, docs/migrate-temporal.md):
// one snippet from each peer's docs, ported as those pages say, run on SQLite and on Restate,
// so the mapping holds on both backends.
import { expect } from 'vitest';
import { manual, TimeoutError, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function peerPortScenarios({ test, boot, until }: ScenarioKit): void {
  // DBOS docs, "Workflow messaging": a checkout workflow DBOS.recv's 'payment_status' (null when
  // the timeout passes) and runs fulfillOrder or cancelOrder; the payment webhook
  // DBOS.send's the status to the workflow ID. Ported: the workflow ID is the run id, send is
  // engine.signal, recv is step.waitForEvent (a timeout throws instead of returning null).
  test('DBOS messaging ported: a message sent to the workflow ID (also before the wait) or the timeout decides', async () => {
    const done: string[] = [];
    const checkout = workflow<{ orderId: string }>('checkout', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        let notification: string | null = null;
        try {
          notification = await step.waitForEvent<string>('payment_status', { timeout: '2s' });
        } catch (err) {
          if (!(err instanceof TimeoutError)) throw err;
        }
        if (notification === 'paid') return step.do('fulfillOrder', () => (done.push(`fulfil ${input.orderId}`), 'fulfilled'));
        return step.do('cancelOrder', () => (done.push(`cancel ${input.orderId}`), 'cancelled'));
      });
    });
    const { engine } = await boot([checkout]);
    for (const id of ['a', 'b', 'c']) await engine.trigger(checkout, { orderId: id }, { runId: `order-${id}` });
    await engine.signal('order-a', 'payment_status', 'paid');
    await engine.signal('order-b', 'payment_status', 'failed');
    expect((await engine.result('order-a', { timeout: '30s' })).output).toBe('fulfilled');
    expect((await engine.result('order-b', { timeout: '30s' })).output).toBe('cancelled');
    expect((await engine.result('order-c', { timeout: '30s' })).output).toBe('cancelled'); // nothing within the timeout
    expect(done.sort()).toEqual(['cancel b', 'cancel c', 'fulfil a']);
    // DBOS.startWorkflow with an existing workflow ID gives that workflow: the same run here.
    expect(await engine.trigger(checkout, { orderId: 'a' }, { runId: 'order-a' })).toEqual({ runId: 'order-a', created: false });
  });

  // Temporal docs, design patterns, "Approval": the workflow asks an approver, blocks on
  // condition(() => decision !== undefined, timeout) while a signal handler stores the decision
  // (approved or not, the approver), and follows the timeout path when none comes. Ported:
  // the signal's payload is what step.waitForEvent returns; its TimeoutError is the timeout path.
  test('Temporal approval pattern ported: decision by signal with its metadata, or the timeout path', async () => {
    type Decision = { approved: boolean; approver: string };
    const asked: string[] = [];
    const approval = workflow<{ requestId: string }>('approval', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.do('notify-approver', () => void asked.push(input.requestId));
        try {
          const d = await step.waitForEvent<Decision>('approve', { timeout: '2s' });
          return { requestId: input.requestId, status: d.approved ? 'approved' : 'rejected', approver: d.approver };
        } catch (err) {
          if (!(err instanceof TimeoutError)) throw err;
          return { requestId: input.requestId, status: 'timed-out' };
        }
      });
    });
    const { engine } = await boot([approval]);
    for (const id of ['r1', 'r2', 'r3']) await engine.trigger(approval, { requestId: id }, { runId: id });
    await until('r1 and r2 to wait for a decision', async () =>
      (await engine.runs.get('r1')).status === 'waiting' && (await engine.runs.get('r2')).status === 'waiting');
    await engine.signal('r1', 'approve', { approved: true, approver: 'ada' });
    await engine.signal('r2', 'approve', { approved: false, approver: 'bo' });
    expect((await engine.result('r1', { timeout: '30s' })).output).toEqual({ requestId: 'r1', status: 'approved', approver: 'ada' });
    expect((await engine.result('r2', { timeout: '30s' })).output).toEqual({ requestId: 'r2', status: 'rejected', approver: 'bo' });
    expect((await engine.result('r3', { timeout: '30s' })).output).toEqual({ requestId: 'r3', status: 'timed-out' });
    expect(asked.sort()).toEqual(['r1', 'r2', 'r3']);
    // As Temporal refuses a signal to a closed workflow, a finished run refuses one.
    await expect(engine.signal('r1', 'approve', { approved: false, approver: 'late' })).rejects.toThrow(/already finished/);
  });
}
