// Child runs THROUGH THE RUNNER (issue 40, docs/children.md): a workflow file invokes another
// file's workflow by name; each run executes in its own Deno child (its own sandbox and
// permissions); the start and the signal are asked of the engine over the step protocol.
import { expect } from 'vitest';
import { OUT_PERMISSIONS } from './harness.ts';
import type { FileKit } from './suite.ts';

const P = `{ permissions: ${OUT_PERMISSIONS} }`;

export function childFileScenarios({ test, boot }: FileKit): void {
  test('a workflow file invokes another file\'s workflow and signals its parent; each runs in its own child', async () => {
    const rig = await boot([`
export default workflow('file-parent', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const out = await step.invoke('kid', 'file-kid', { parent: ctx.runId, n: 6 });
    const note = await step.waitForEvent('note', { timeout: '60s' });
    return { out, note, pid: Deno.pid };
  });
});`, `
export default workflow('file-kid', ${P}, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx, input }) => {
    await ctx.signal(input.parent, 'note', 'from ' + ctx.runId);
    const sq = await step.do('square', () => input.n * input.n);
    return { sq, pid: Deno.pid };
  });
});`]);
    const { runId } = await rig.engine.trigger('file-parent', null, { runId: 'fp' });
    const view = await rig.engine.result(runId, { timeout: '90s' });
    expect(view.status).toBe('succeeded');
    const out = view.output as { out: { sq: number; pid: number }; note: string; pid: number };
    expect(out.out.sq).toBe(36);
    expect(out.note).toBe('from fp:kid');
    expect(out.out.pid).not.toBe(out.pid);
    expect(out.pid).not.toBe(process.pid);
    expect((await rig.engine.runs.get('fp:kid')).parent).toMatchObject({ runId: 'fp', step: 'kid' });
    expect((await rig.engine.runs.list({ parent: runId })).map((r) => r.runId)).toEqual(['fp:kid']);
  }, 120_000);
}
