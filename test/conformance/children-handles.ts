// Conformance scenarios for awaiting a child more than once (issue 40, docs/children.md):
// a child run's end is recorded once in the parent's journal, so every later step.result of
// the same child (in sequence, in parallel, after a timed-out wait) gets that same end, as a
// Temporal child handle's result() or a Restate call's promise awaited again does. Every case
// runs on SQLite and on Restate.
import { expect } from 'vitest';
import { ChildRunError, TerminalError, TimeoutError, manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function childHandleScenarios({ test, boot }: ScenarioKit): void {
  test('a child handle awaited again (in sequence, in parallel, after a timeout) gives the same end', async () => {
    const slow = workflow('slow-echo', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.sleep('nap', 300);
        return { echo: input };
      });
    });
    const failing = workflow('always-declines', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('charge', () => {
          throw new TerminalError('card declined');
        });
      });
    });
    const parent = workflow('twice', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const h = await step.start('kid', slow, 'x');
        let timedOut = false;
        try {
          await step.result(h, { timeout: '10ms' });
        } catch (err) {
          timedOut = err instanceof TimeoutError;
        }
        const [ra, rb, rc] = await Promise.allSettled([step.result(h), step.result(h), step.result(h, { timeout: '5s' })]);
        const [a, b] = [ra, rb].map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason)));
        const refused = rc.status === 'rejected' ? String(rc.reason) : 'not refused';
        const c = await step.result(h);
        const bad = await step.start('bad', failing, null);
        const errors: string[] = [];
        for (let i = 0; i < 2; i++) {
          try {
            await step.result(bad);
          } catch (err) {
            errors.push(`${err instanceof ChildRunError}: ${(err as Error).message}`);
          }
        }
        // An invoked child awaited again by its run id.
        const d = await step.invoke('again', slow, 'y', { runId: 'twice-again' });
        const e = await step.result('twice-again');
        return { timedOut, a, b, refused, c, errors, d, e };
      });
    });
    const { engine } = await boot([slow, failing, parent]);
    const { runId } = await engine.trigger('twice', null, { runId: 'tw-1' });
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    const declined = "true: child run tw-1:bad of workflow 'always-declines' failed: TerminalError: card declined";
    // A concurrent wait with a deadline of its own is refused (a second timer would race the first wait).
    const refused = "ValidationError: step.result('tw-1:kid', { timeout }): another step.result of this child is still waiting; await that one, or give the concurrent waits no timeout";
    expect(view.output).toEqual({ timedOut: true, a: { echo: 'x' }, b: { echo: 'x' }, refused, c: { echo: 'x' }, errors: [declined, declined], d: { echo: 'y' }, e: { echo: 'y' } });
    // One child per start: awaiting again starts nothing.
    expect((await engine.runs.get(runId)).children?.map((c) => c.runId).sort()).toEqual(['tw-1:bad', 'tw-1:kid', 'twice-again']);
  });
}
