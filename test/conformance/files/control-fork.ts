// runs.fork THROUGH THE RUNNER (the in-process cases of the same names are in
// test/conformance/control-fork.ts): a fork of a file's run executes the snapshot of the
// ORIGINAL's version (also after the file changed on disk), its steps before the fork point
// served to the child from the journal the fork starts with (docs/control.md, Fork). The
// snapshot-gone refusal and the approval of the original's version: test/deno/fork-snapshot.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';
import { expectForkRefusals } from '../control-fork.ts';

export function forkFileScenarios({ test, boot }: FileKit): void {
  test('fork reusing recorded results: steps before the fork point are not run again and return the recorded values; the fork point and later steps run; same input and version; linked both ways', async () => {
    const rig = await boot(`
export default workflow('forkable', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step, ctx }) => {
    const a = await step.do('a', () => (hit('a'), { n: read('a').length, input }));
    const r = ctx.random();
    const t = ctx.now();
    const go = await step.waitForEvent('go');
    await step.sleep('nap', 10);
    const b = await step.do('b', () => (hit('b'), read('b').length));
    const c = await step.do('c', ({ idempotencyKey }) => (hit('keys', idempotencyKey + '\\n'), hit('c'), read('c').length));
    return { a, r, t, go, b, c, code: 'v1' };
  });
});`);
    const { engine, hits } = rig;
    const { runId } = await engine.trigger('forkable', { x: 1 });
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.signal(runId, 'go', { ok: 1 });
    const first = await engine.result(runId, { timeout: '60s' });
    expect(first.status).toBe('succeeded');
    const out = first.output as { a: unknown; r: number; t: number; go: unknown; b: number; c: number };
    expect(out).toMatchObject({ a: { n: 1, input: { x: 1 } }, go: { ok: 1 }, b: 1, c: 1, code: 'v1' });
    const seqOf = (name: string) => first.steps.find((s) => s.name === name)!.seq;

    // The file changes on disk (same declaration: approved too): a fork still runs the
    // original's version, the snapshot its run was created at.
    writeFileSync(rig.file, readFileSync(rig.file, 'utf8').replace("code: 'v1'", "code: 'v2'"));

    // From 'b' by name: a, ctx.random, ctx.now, the wait and the sleep are reused as recorded.
    const fork = await engine.runs.fork(runId, { from: 'b', runId: `${runId}-fork` });
    expect(fork).toMatchObject({ runId: `${runId}-fork`, created: true, from: { seq: seqOf('b'), name: 'b' } });
    expect(fork.reused.map((s) => s.seq)).toEqual(first.steps.filter((s) => s.seq < seqOf('b')).map((s) => s.seq));
    const forked = await engine.result(fork.runId, { timeout: '60s' });
    expect(forked.status).toBe('succeeded');
    // Nothing before 'b' ran again (no second body, no second wait: no signal was sent to it).
    expect(forked.output).toEqual({ ...out, b: 2, c: 2 });
    expect([hits('a'), hits('b'), hits('c')]).toEqual([1, 2, 2]);
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
    expect((await engine.result(byPosition.runId, { timeout: '60s' })).output).toEqual({ ...out, c: 3 });
    expect([hits('a'), hits('b'), hits('c')]).toEqual([1, 2, 3]);
    // A fresh step of a fork is a new run's step: its own idempotency key.
    expect(rig.text('keys').trim().split('\n')).toEqual([`${runId}/c`, `${fork.runId}/c`, `${byPosition.runId}/c`]);

    const old = await engine.runs.get(runId);
    expect(old.reruns).toEqual([fork.runId, byPosition.runId]);
    expect(old.status).toBe('succeeded');
    expect(old.steps).toEqual(first.steps); // the original stays as history
    // The same new run id again: the first fork, nothing started.
    expect(await engine.runs.fork(runId, { from: 'b', runId: `${runId}-fork` })).toMatchObject({ runId: `${runId}-fork`, created: false });
    expect([hits('a'), hits('b'), hits('c')]).toEqual([1, 2, 3]);
    // A rerun, by contrast, runs the file as it is now.
    const rerun = await engine.runs.rerun(runId);
    await until('the rerun to wait', async () => (await engine.runs.get(rerun.runId)).status === 'waiting');
    await engine.signal(rerun.runId, 'go', 'again');
    expect((await engine.result(rerun.runId, { timeout: '60s' })).output).toMatchObject({ code: 'v2' });
  }, 120_000);

  test('fork of a live run from its wait waits again for its own signal, across a restart; fork refuses an unknown run, a step not reached, a position not recorded, a bad option', async () => {
    const rig = await boot(`
export default workflow('fork-live', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('a', () => (hit('a'), read('a').length));
    const go = await step.waitForEvent('go');
    const after = await step.do('after', () => (hit('after'), read('after').length));
    return { a, go, after };
  });
});`);
    const { engine, hits } = rig;
    const { runId } = await engine.trigger('fork-live', null);
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await expectForkRefusals(engine, runId);
    // The original's wait is open: the fork reuses 'a' and waits for a signal of its own.
    const fork = await engine.runs.fork(runId, { from: 'go' });
    expect(fork.reused.map((s) => s.name)).toEqual(['a']);
    await until('the fork to wait', async () => (await engine.runs.get(fork.runId)).status === 'waiting');
    // Across a restart the fork replays with its reused steps (Restate: from its run request).
    const again = await rig.restart();
    await again.signal(fork.runId, 'go', 'fork');
    expect((await again.result(fork.runId, { timeout: '60s' })).output).toEqual({ a: 1, go: 'fork', after: 1 });
    expect((await again.runs.get(fork.runId)).forkedFrom).toEqual({ seq: 1, name: 'go' });
    expect((await again.runs.get(runId)).status).toBe('waiting');
    await again.signal(runId, 'go', 'original');
    expect((await again.result(runId, { timeout: '60s' })).output).toEqual({ a: 1, go: 'original', after: 2 });
    expect([hits('a'), hits('after')]).toEqual([1, 2]);
  }, 120_000);

  test('fork around a child run: a fork past both its start and its end reuses them; past its start only it is refused; from the start it starts a child of its own', async () => {
    const { engine, hits } = await boot([`
export default workflow('fork-leaf', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('work', () => (hit('leaf'), \`\${String(input)}:\${read('leaf').length}\`)));
});`, `
export default workflow('fork-top', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const id = await step.start('kid', 'fork-leaf', 'x');
    const mid = await step.do('mid', () => 'mid');
    const got = await step.result(id);
    const after = await step.do('after', () => (hit('after'), read('after').length));
    return { got, mid, after };
  });
});`]);
    const { runId } = await engine.trigger('fork-top', null, { runId: 'FT' });
    expect((await engine.result(runId, { timeout: '60s' })).output).toEqual({ got: 'x:1', mid: 'mid', after: 1 });
    // Past the child's end: its start and end are reused, no child runs again.
    const past = await engine.runs.fork(runId, { from: 'after' });
    expect((await engine.result(past.runId, { timeout: '60s' })).output).toEqual({ got: 'x:1', mid: 'mid', after: 2 });
    expect(hits('leaf')).toBe(1);
    // Between its start and its end: the end goes to FT only, the fork would wait for good.
    await expect(engine.runs.fork(runId, { from: 'mid' })).rejects.toThrow("runs.fork: step 'kid' before 'mid' started child run FT:kid, whose end only run FT hears; fork from 'kid' or earlier (the fork then starts a child of its own)");
    // From the start: the fork starts its own child.
    const own = await engine.runs.fork(runId, { from: 'kid', runId: 'FK' });
    expect((await engine.result(own.runId, { timeout: '60s' })).output).toEqual({ got: 'x:2', mid: 'mid', after: 3 });
    expect((await engine.runs.get('FK')).children).toEqual([{ runId: 'FK:kid', workflow: 'fork-leaf', step: 'kid', status: 'succeeded' }]);
    expect((await engine.runs.get('FT')).children).toEqual([{ runId: 'FT:kid', workflow: 'fork-leaf', step: 'kid', status: 'succeeded' }]);
  }, 120_000);
}
