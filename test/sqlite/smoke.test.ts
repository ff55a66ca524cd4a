import { describe, expect, it } from 'vitest';
import { workflow, manual, TerminalError } from '@tranquil/sdk';
import { createTestEngine } from '@tranquil/engine/testing';

describe('smoke', () => {
  it('runs a workflow with a 48h sleep in test time', async () => {
    const calls: string[] = [];
    const wf = workflow('nudge', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step, ctx }) => {
        await step.sleep('pause', '48h');
        const user = await step.do('fetch', ({ idempotencyKey }) => { calls.push(idempotencyKey); return { id: input.userId, activated: false }; });
        const t = ctx.now();
        return { user, t };
      });
    });
    const t = await createTestEngine({ workflows: [wf], startAt: '2026-03-28T08:00:00Z' });
    const { runId } = await t.engine.trigger('nudge', { userId: 'u1' });
    await t.idle();
    expect((await t.engine.runs.get(runId)).status).toBe('sleeping');
    console.log((await t.engine.runs.explain(runId)).summary);
    await t.advance('48h');
    const v = await t.engine.runs.get(runId);
    expect(v.status).toBe('succeeded');
    expect(v.output).toEqual({ user: { id: 'u1', activated: false }, t: Date.parse('2026-03-30T08:00:00Z') });
    expect(calls).toEqual([`${runId}/fetch`]);
    console.log(JSON.stringify(v, null, 1));
    await t.close();
  });
});
