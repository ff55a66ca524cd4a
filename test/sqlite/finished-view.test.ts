// engine.result() hands back the finished run's view (storedResult: as stored; result: with
// its input and output decoded by the value codec). For a run executed start to finish in
// one go, the engine builds it from what it just committed instead of re-reading the file;
// it must be exactly the view the file gives (engine.runs.get), whatever the workflow did
// to its own copies of step results and input. A run created and finished in one execution
// gets a view built without reading its row at all (created, version, input from startRun).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import { decodeValue } from '../../src/domain/value-codec.ts';

const dirs: string[] = [];
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const mirror = workflow('mirror', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step, ctx }) => {
    (input as Record<string, unknown>).touched = true; // the session's copy, not the stored input
    const obj = await step.do('obj', () => ({ list: [1, 2], when: new Date(0), gone: undefined as unknown }));
    obj.list.push(3); // the workflow's copy, not the journal's
    const t = ctx.now();
    const r = ctx.random();
    const go = await step.waitForEvent<{ n: number }>('go', { timeout: '10s' });
    go.n = -1;
    await ctx.emit('mirrored', { t });
    const opts = input as { fail?: boolean; nap?: boolean };
    if (opts.nap) await step.sleep('nap', 20);
    if (opts.fail) await step.do('boom', () => { throw new TerminalError('nope'); });
    return { obj, t, r, go };
  });
});

async function boot(): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-view-'));
  dirs.push(dir);
  const e = await createEngine({ dataDir: dir, workflows: [mirror] });
  await e.start();
  engines.push(e);
  return e;
}

for (const input of [{}, { fail: true }, { nap: true }, { nap: true, fail: true }]) {
  it(`the view result() returns equals the stored view (${JSON.stringify(input)})`, async () => {
    const e = await boot();
    const runId = `mirror-${Object.keys(input).join(".") || "plain"}`;
    await e.trigger('mirror', input, { runId });
    await e.signal(runId, 'go', { n: 1 }); // lands before the run reaches its wait: taken without suspending
    const finished = await e.storedResult(runId, { timeout: '10s' });
    expect(finished.status).toBe(input.fail ? 'failed' : 'succeeded');
    expect(finished.steps.map((s) => s.name)).toEqual(['obj', 'ctx.now', 'ctx.random', 'go', 'emit:mirrored'].concat(input.nap ? ['nap'] : [], input.fail ? ['boom'] : []));
    // Stored in the value codec's tagged form (a Date, an undefined): decoded, the step's value.
    expect(decodeValue(finished.steps[0]!.result)).toEqual({ list: [1, 2], when: new Date(0), gone: undefined });
    expect(finished.steps[3]!.result).toEqual({ n: 1 });
    expect(finished.input).toEqual(input);
    const stored = await e.runs.get(runId);
    expect(finished).toEqual(stored);
    expect(JSON.stringify(finished), 'same keys in the same order').toBe(JSON.stringify(stored));
    // result() is that view with input and output decoded (the output holds the Date).
    const decoded = await e.result(runId);
    expect(decoded).toEqual({ ...stored, input: decodeValue(stored.input), output: decodeValue(stored.output) });
    if (!input.fail) expect((decoded.output as unknown as { obj: { when: unknown } }).obj.when).toEqual(new Date(0));
  });
}
