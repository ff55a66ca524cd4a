// Live output THROUGH THE RUNNER (docs/live-output.md): ctx.publish and ctx.stream in a
// workflow file's Deno child, read by the engine while the run waits and after a restart.
// The in-process cases (test/conformance/live-output.ts) are listed as not ported: this one
// checks the same journal path (an attempt and a record of kind publish / stream).
import { expect } from 'vitest';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

export function liveOutputFileScenarios({ test, boot }: FileKit): void {
  test('files: ctx.publish and ctx.stream in a workflow file: state and chunks read while it waits and after a restart, nothing written twice', async () => {
    const rig = await boot([`
export default workflow('file-live', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const out = ctx.stream('rows');
    await ctx.publish('progress', { done: 1, at: new Date(0) });
    await out.write('r1');
    await step.waitForEvent('go');
    await out.write('r2');
    await out.close();
    await ctx.publish('progress', { done: 2 });
    return 'ok';
  });
});`]);
    const { runId } = await rig.engine.trigger('file-live', null);
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    expect(await rig.engine.runs.state(runId, 'progress')).toEqual({ done: 1, at: new Date(0) });
    const second = await rig.restart();
    await until('run to wait again', async () => (await second.runs.get(runId)).status === 'waiting');
    await second.signal(runId, 'go', null);
    expect((await second.result(runId, { timeout: '60s' })).status).toBe('succeeded');
    expect(await second.runs.state(runId, 'progress')).toEqual({ done: 2 });
    const chunks: unknown[] = [];
    for await (const c of second.runs.stream(runId, 'rows')) chunks.push(c);
    expect(chunks).toEqual(['r1', 'r2']);
    const view = await second.runs.get(runId);
    expect(view.steps.filter((s) => s.kind === 'publish' || s.kind === 'stream').map((s) => s.name)).toEqual(['publish:progress', 'stream:rows', 'stream:rows#2', 'stream:rows#3', 'publish:progress#2']);
  });

  test('files: a step body streams from the Deno child (info.stream): a retried attempt\'s chunks are not stored, the one that succeeded\'s are, once', async () => {
    const rig = await boot([`
export default workflow('file-body-stream', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const n = await step.do('gen', { retries: { limit: 2, delay: 10, backoff: 'constant', jitter: false } }, ({ stream, attempt }) => {
      const out = stream('tokens');
      if (attempt === 1) {
        out.write('lost');
        throw new Error('dropped');
      }
      out.write('b1');
      out.write('b2');
      return 2;
    });
    await ctx.stream('tokens').close();
    return n;
  });
});`]);
    const { runId } = await rig.engine.trigger('file-body-stream', null);
    const view = await rig.engine.result(runId, { timeout: '60s' });
    expect(view).toMatchObject({ status: 'succeeded', output: 2 });
    const chunks: unknown[] = [];
    for await (const c of rig.engine.runs.stream(runId, 'tokens')) chunks.push(c);
    expect(chunks).toEqual(['b1', 'b2']);
  });
}
