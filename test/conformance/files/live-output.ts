// Live output THROUGH THE RUNNER (docs/live-output.md): ctx.publish and ctx.stream in a
// workflow file's Deno child, read by the engine while the run waits and after a restart.
// Most in-process cases (test/conformance/live-output.ts) are listed as not ported: the first
// case here checks the same journal path (an attempt and a record of kind publish / stream).
// The step events case is ported: the host makes a file's events from what it serves the
// child (child-observer.ts), and they must be the in-process session's.
import { expect } from 'vitest';
import type { Engine } from '@tranquil/engine';
import type { StepEvent } from '../../../src/runtime/step-events.ts';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

export function liveOutputFileScenarios({ test, boot }: FileKit): void {
  test('files: ctx.publish and ctx.stream in a workflow file: state, chunks and their step events read while it waits and after a restart, nothing written twice', async () => {
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
    // Their step events, made by the host: the chunk (stored form) and its offset, the close
    // with the number of chunks; each engine reports only what its execution wrote.
    const heard = (e: Engine) => {
      const got: unknown[][] = [];
      e.runs.subscribe((ev) => void (ev.key !== undefined && got.push([ev.type, ev.key, ev.offset ?? null, ev.chunk ?? null])));
      return got;
    };
    const firstHeard = heard(rig.engine);
    const { runId } = await rig.engine.trigger('file-live', null);
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    expect(await rig.engine.runs.state(runId, 'progress')).toEqual({ done: 1, at: new Date(0) });
    await until('the first chunk\'s event', () => firstHeard.length === 2);
    expect(firstHeard).toEqual([['state.published', 'progress', null, null], ['stream.chunk', 'rows', 0, 'r1']]);
    const second = await rig.restart();
    const secondHeard = heard(second);
    await until('run to wait again', async () => (await second.runs.get(runId)).status === 'waiting');
    await second.signal(runId, 'go', null);
    expect((await second.result(runId, { timeout: '60s' })).status).toBe('succeeded');
    expect(await second.runs.state(runId, 'progress')).toEqual({ done: 2 });
    const chunks: unknown[] = [];
    for await (const c of second.runs.stream(runId, 'rows')) chunks.push(c);
    expect(chunks).toEqual(['r1', 'r2']);
    expect(secondHeard).toEqual([['stream.chunk', 'rows', 1, 'r2'], ['stream.closed', 'rows', 2, null], ['state.published', 'progress', null, null]]);
    expect(firstHeard).toHaveLength(2);
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

  test('step events: a run\'s events in order, once per real attempt; a restart replays none of them', async () => {
    const rig = await boot([`
export default workflow('evented', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.do('flaky', { retries: { limit: 2, delay: 50, backoff: 'constant', jitter: false } }, ({ attempt }) => {
      if (attempt === 1) throw new Error('once');
      return 1;
    });
    await ctx.publish('k', 1);
    await step.sleep('nap', 100);
    await step.waitForEvent('go', { timeout: '1h' });
    await step.do('last', () => 2);
    return 'ok';
  });
});`]);
    const runId = 'evented-1';
    const follow = (e: Engine) => {
      const one: StepEvent[] = [];
      const every: StepEvent[] = [];
      const offs = [e.runs.subscribe((ev) => void one.push(ev), { runId }), e.runs.subscribe((ev) => void every.push(ev))];
      return { one, every, off: () => offs.forEach((f) => f()) };
    };
    const first = follow(rig.engine);
    await rig.engine.trigger('evented', null, { runId });
    await until('the run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    await until('the waiting event', () => first.one.some((e) => e.type === 'step.waiting'));
    const shape = (es: StepEvent[]) => es.map((e) => [e.type, e.step, e.attempt ?? null]);
    expect(shape(first.one)).toEqual([
      ['step.started', 'flaky', 1],
      ['step.retrying', 'flaky', 1],
      ['step.started', 'flaky', 2],
      ['step.succeeded', 'flaky', 2],
      ['state.published', 'publish:k', null],
      ['step.sleeping', 'nap', null],
      ['step.waiting', 'go', null],
    ]);
    expect(first.every).toEqual(first.one);
    const retrying = first.one[1]!;
    expect(retrying).toMatchObject({ runId, workflow: 'evented', kind: 'do', error: { message: 'once' } });
    // The next attempt is due a backoff (50 ms) after the first failed, and starts no earlier.
    expect(retrying.until).toBeGreaterThanOrEqual(first.one[0]!.at + 50);
    expect(first.one[2]!.at).toBeGreaterThanOrEqual(retrying.until! - 5);
    expect(first.one[4]).toMatchObject({ key: 'k', kind: 'publish' });
    first.off();
    const again = await rig.restart();
    const second = follow(again);
    await until('the run to wait again', async () => (await again.runs.get(runId)).status === 'waiting');
    await again.signal(runId, 'go', null);
    expect((await again.result(runId, { timeout: '60s' })).status).toBe('succeeded');
    await until('the last step\'s event', () => second.one.some((e) => e.type === 'step.succeeded' && e.step === 'last'));
    expect(shape(second.one)).toEqual([
      ['step.signaled', 'go', null],
      ['step.started', 'last', 1],
      ['step.succeeded', 'last', 1],
    ]);
    // Unsubscribed: the first engine's lists got nothing more.
    expect(first.one).toHaveLength(7);
  });

  // Files only: an attempt that crashed its child (exit 70) fails in the next child, whose
  // session counts it; its outcome event is owed all the same, once, with the crash's reason.
  test('files: step events of an attempt that crashed its child: started, then retrying with the crash, then the next attempt', async () => {
    const rig = await boot([`
export default workflow('crash-once', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('unstable', { retries: { limit: 2, delay: 10, backoff: 'constant', jitter: false } }, ({ attempt }) => {
    if (attempt === 1) Deno.exit(70);
    return 'ok';
  }));
});`]);
    const got: StepEvent[] = [];
    rig.engine.runs.subscribe((ev) => void got.push(ev));
    const { runId } = await rig.engine.trigger('crash-once', null);
    expect((await rig.engine.result(runId, { timeout: '60s' })).status).toBe('succeeded');
    await until('the last attempt\'s event', () => got.some((e) => e.type === 'step.succeeded'));
    expect(got.map((e) => [e.type, e.step, e.attempt ?? null])).toEqual([
      ['step.started', 'unstable', 1],
      ['step.retrying', 'unstable', 1],
      ['step.started', 'unstable', 2],
      ['step.succeeded', 'unstable', 2],
    ]);
    expect(got[1]!.error?.message).toMatch(/crashed \(exit 70\)/);
  });
}
