// Conformance scenarios for runs.fork (issue 41, docs/control.md): a new run from a step of a
// run, the steps before it reusing the original's recorded results. Called from
// runConformance(): the same on every backend.
import { expect } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';
import { applyOp, opSchema } from '../../cli/ops.ts';
import { describeFork } from '../../cli/control.ts';
import type { Engine, ForkResult } from '@tranquil/engine';

export function forkScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('fork reusing recorded results: steps before the fork point are not run again and return the recorded values; the fork point and later steps run; same input and version; linked both ways', async () => {
    const calls = { a: 0, b: 0, c: 0 };
    const keys: string[] = [];
    const wf = workflow('forkable', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step, ctx }) => {
        const a = await step.do('a', () => ({ n: ++calls.a, input }));
        const r = ctx.random();
        const t = ctx.now();
        const go = await step.waitForEvent('go');
        await step.sleep('nap', 10);
        const b = await step.do('b', () => ++calls.b);
        const c = await step.do('c', ({ idempotencyKey }) => (keys.push(idempotencyKey), ++calls.c));
        return { a, r, t, go, b, c };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('forkable', { x: 1 });
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.signal(runId, 'go', { ok: 1 });
    const first = await engine.result(runId, { timeout: '20s' });
    expect(first.status).toBe('succeeded');
    const out = first.output as { a: unknown; r: number; t: number; go: unknown; b: number; c: number };
    expect(out).toMatchObject({ a: { n: 1, input: { x: 1 } }, go: { ok: 1 }, b: 1, c: 1 });
    const seqOf = (name: string) => first.steps.find((s) => s.name === name)!.seq;

    // From 'b' by name: a, ctx.random, ctx.now, the wait and the sleep are reused as recorded.
    const fork = await engine.runs.fork(runId, { from: 'b', runId: `${runId}-fork` });
    expect(fork).toMatchObject({ runId: `${runId}-fork`, created: true, from: { seq: seqOf('b'), name: 'b' } });
    expect(fork.reused.map((s) => s.seq)).toEqual(first.steps.filter((s) => s.seq < seqOf('b')).map((s) => s.seq));
    const forked = await engine.result(fork.runId, { timeout: '20s' });
    expect(forked.status).toBe('succeeded');
    // Nothing before 'b' ran again (no second body, no second wait: no signal was sent to it).
    expect(forked.output).toEqual({ ...out, b: 2, c: 2 });
    expect(calls).toEqual({ a: 1, b: 2, c: 2 });
    expect(forked.input).toEqual({ x: 1 });
    expect(forked.version).toBe(first.version);
    const fv = await engine.runs.get(fork.runId);
    expect(fv.steps.map((s) => [s.name, s.status])).toEqual(first.steps.map((s) => [s.name, s.status]));
    expect(fv.steps.filter((s) => s.seq < seqOf('b')).map((s) => s.result)).toEqual(first.steps.filter((s) => s.seq < seqOf('b')).map((s) => s.result));
    expect(fv.rerunOf).toBe(runId);
    expect(fv.forkedFrom).toEqual({ seq: seqOf('b'), name: 'b' });
    expect((await engine.runs.explain(fork.runId)).details).toContain(`fork of run ${runId} from step 'b' (position ${seqOf('b')}): the steps before it reused that run's recorded results`);

    // From a position: only 'c' runs again.
    const byPosition = await engine.runs.fork(runId, { from: seqOf('c') });
    expect(byPosition.from).toEqual({ seq: seqOf('c'), name: 'c' });
    expect((await engine.result(byPosition.runId, { timeout: '20s' })).output).toEqual({ ...out, c: 3 });
    expect(calls).toEqual({ a: 1, b: 2, c: 3 });
    // A fresh step of a fork is a new run's step: its own idempotency key.
    expect(keys).toEqual([`${runId}/c`, `${fork.runId}/c`, `${byPosition.runId}/c`]);

    // As the serve's control channel applies `tranquil runs fork` (the op validated as on the wire).
    const viaOp = (await applyOp(engine, opSchema().parse({ op: 'fork', runId, from: 'c', newRunId: `${runId}-op` }))) as ForkResult & { forkOf: string };
    expect(viaOp).toMatchObject({ forkOf: runId, runId: `${runId}-op`, created: true, from: { seq: seqOf('c'), name: 'c' } });
    expect(describeFork(runId, viaOp)).toBe(`started ${runId}-op (fork of ${runId} from step 'c' at position ${seqOf('c')}); reused ${viaOp.reused.length} recorded steps: ${viaOp.reused.map((x) => `'${x.name}'`).join(', ')}`);
    expect((await engine.result(viaOp.runId, { timeout: '20s' })).output).toEqual({ ...out, c: 4 });

    const old = await engine.runs.get(runId);
    expect(old.reruns).toEqual([fork.runId, byPosition.runId, viaOp.runId]);
    expect(old.status).toBe('succeeded');
    expect(old.steps).toEqual(first.steps); // the original stays as history
    // The same new run id again: the first fork, nothing started.
    expect(await engine.runs.fork(runId, { from: 'b', runId: `${runId}-fork` })).toMatchObject({ runId: `${runId}-fork`, created: false });
    expect(calls).toEqual({ a: 1, b: 2, c: 4 });
  });

  test('fork of a live run from its wait waits again for its own signal, across a restart; fork refuses an unknown run, a step not reached, a position not recorded, a bad option', async () => {
    const calls = { a: 0, after: 0 };
    const wf = workflow('fork-live', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const a = await step.do('a', () => ++calls.a);
        const go = await step.waitForEvent('go');
        const after = await step.do('after', () => ++calls.after);
        return { a, go, after };
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('fork-live', null);
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await expectForkRefusals(engine, runId);
    // The original's wait is open: the fork reuses 'a' and waits for a signal of its own.
    const fork = await engine.runs.fork(runId, { from: 'go' });
    expect(fork.reused.map((s) => s.name)).toEqual(['a']);
    await until('the fork to wait', async () => (await engine.runs.get(fork.runId)).status === 'waiting');
    // Across a restart the fork replays with its reused steps (Restate: from its run request).
    const again = await restart(engine, [wf], dir);
    await again.signal(fork.runId, 'go', 'fork');
    expect((await again.result(fork.runId, { timeout: '20s' })).output).toEqual({ a: 1, go: 'fork', after: 1 });
    expect((await again.runs.get(fork.runId)).forkedFrom).toEqual({ seq: 1, name: 'go' });
    expect((await again.runs.get(runId)).status).toBe('waiting');
    await again.signal(runId, 'go', 'original');
    expect((await again.result(runId, { timeout: '20s' })).output).toEqual({ a: 1, go: 'original', after: 2 });
    expect(calls).toEqual({ a: 1, after: 2 });
  });

  test('fork around a child run: a fork past both its start and its end reuses them; past its start only it is refused; from the start it starts a child of its own', async () => {
    const calls = { leaf: 0, after: 0 };
    const leaf = workflow('fork-leaf', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('work', () => `${String(input)}:${++calls.leaf}`));
    });
    const top = workflow('fork-top', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const id = await step.start('kid', leaf, 'x');
        const mid = await step.do('mid', () => 'mid');
        const got = await step.result<string>(id);
        const after = await step.do('after', () => ++calls.after);
        return { got, mid, after };
      });
    });
    const { engine } = await boot([leaf, top]);
    const { runId } = await engine.trigger('fork-top', null, { runId: 'FT' });
    expect((await engine.result(runId, { timeout: '20s' })).output).toEqual({ got: 'x:1', mid: 'mid', after: 1 });
    // Past the child's end: its start and end are reused, no child runs again.
    const past = await engine.runs.fork(runId, { from: 'after' });
    expect((await engine.result(past.runId, { timeout: '20s' })).output).toEqual({ got: 'x:1', mid: 'mid', after: 2 });
    expect(calls.leaf).toBe(1);
    // Between its start and its end: the end goes to FT only, the fork would wait for good.
    await expect(engine.runs.fork(runId, { from: 'mid' })).rejects.toThrow("runs.fork: step 'kid' before 'mid' started child run FT:kid, whose end only run FT hears; fork from 'kid' or earlier (the fork then starts a child of its own)");
    // From the start: the fork starts its own child.
    const own = await engine.runs.fork(runId, { from: 'kid', runId: 'FK' });
    expect((await engine.result(own.runId, { timeout: '20s' })).output).toEqual({ got: 'x:2', mid: 'mid', after: 3 });
    expect((await engine.runs.get('FK')).children).toEqual([{ runId: 'FK:kid', workflow: 'fork-leaf', step: 'kid', status: 'succeeded' }]);
    expect((await engine.runs.get('FT')).children).toEqual([{ runId: 'FT:kid', workflow: 'fork-leaf', step: 'kid', status: 'succeeded' }]);
  });
}

/** The refusals of a fork of `runId`, a run waiting at 'go' (position 1) after step 'a': an
 *  unknown run, a step not reached, a bad position or option, its own id; nothing started.
 *  Shared with the files suite (files/control-fork.ts), whatever runs the code. */
export async function expectForkRefusals(engine: Engine, runId: string): Promise<void> {
  await expect(engine.runs.fork('no-such-run', { from: 'a' })).rejects.toThrow(/no-such-run/);
  await expect(engine.runs.fork(runId, { from: 'after' })).rejects.toThrow(`runs.fork: run ${runId} has not reached a step named 'after' (its last recorded step is 'go' at position 1`);
  await expect(engine.runs.fork(runId, { from: 'nope' })).rejects.toThrow(/has not reached a step named 'nope'/);
  await expect(engine.runs.fork(runId, { from: 7 })).rejects.toThrow(`runs.fork: run ${runId} has no recorded step at position 7 (its last recorded step is 'go' at position 1)`);
  await expect(engine.runs.fork(runId, { from: -1 })).rejects.toThrow(/runs\.fork options.*from/);
  await expect(engine.runs.fork(runId, {} as never)).rejects.toThrow(/runs\.fork options.*from/);
  await expect(engine.runs.fork(runId, { from: 'a', runId })).rejects.toThrow(`runs.fork: the new run's id must not be the original's (${runId})`);
  expect((await engine.runs.list()).length).toBe(1); // nothing started by a refusal
}
