// Live output over the control channel (docs/live-output.md, docs/host.md): an app attached
// to an engine that owns a data dir (here an engine with `control: true` in this process; the
// channel is the same loopback HTTP with its token as any serve's) reads a run's published
// state (the latest, a wait for a key, a wait that times out) and follows a stream live as an
// async iterator, then reads it again from an offset after the run ended, and subscribes to
// the run's step events; on SQLite and Restate. Bad keys, names, offsets and runs come back as the engine's own errors, one line.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { attach, createEngine, TimeoutError, UnknownRunError, ValidationError, type Engine, type StepEvent } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { removeDataDir } from '../restate/data-dir.ts';

const live = workflow('live', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const out = ctx.stream('tokens');
    await ctx.publish('progress', 1);
    await out.write('a');
    await out.write('b');
    await step.waitForEvent('go', { timeout: '1h' });
    await ctx.publish('progress', new Map([['done', new Date(0)]]));
    await ctx.publish('phase', 'second');
    await out.write('c');
    await out.write({ at: new Date(0) });
    await out.close();
    return 'done';
  });
});

// A body writes 2 chunks and fails, then 3 on its retry; the test opens the gates.
let gates: { write: Promise<void>; fail: Promise<void> } = { write: Promise.resolve(), fail: Promise.resolve() };
const bodyTokens = workflow('body-tokens', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.do('gen', { retries: { limit: 2, delay: 50, backoff: 'constant', jitter: false } }, async ({ stream, attempt }) => {
      const out = stream('tokens');
      if (attempt === 1) {
        await gates.write;
        out.write('x1');
        out.write('x2');
        await gates.fail;
        throw new Error('the model dropped');
      }
      for (const t of ['y1', 'y2']) out.write(t);
      out.write(new Map([['n', 3]]));
      return 3;
    });
    await ctx.stream('tokens').close();
    return 'ok';
  });
});

const engines: Engine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop().catch(() => {});
  for (const d of dirs.splice(0)) removeDataDir(d);
});

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !(await cond()); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['sqlite', 'restate'] as const)('live output over the control channel (%s)', (backend) => {
  it('an attached app reads published state and follows a stream live, then reads it again from an offset', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), `tranquil-attach-live-${backend}-`));
    dirs.push(dataDir);
    const engine = await createEngine({ backend, dataDir, workflows: [live], control: true });
    engines.push(engine);
    await engine.start();
    const app = await attach({ dataDir });

    // Step events: the app's subscription over the channel sees what the engine's own does.
    const runId = 'live-1';
    const seenHere: StepEvent[] = [];
    const offHere = engine.runs.subscribe((e) => void seenHere.push(e), { runId });
    const seenByApp: StepEvent[] = [];
    const offApp = await app.runs.subscribe((e) => void seenByApp.push(e), { runId });
    await expect(app.runs.subscribe(() => {}, { runId: '' })).rejects.toThrow(ValidationError);
    await expect(app.runs.subscribe(() => {}, { run: runId } as never)).rejects.toThrow(/^runs\.subscribe options: /);
    expect((await app.trigger('live', null, { runId })).created).toBe(true);
    await until('the run to wait', async () => (await app.runs.get(runId)).status === 'waiting');
    expect(await app.runs.state(runId, 'progress')).toBe(1);
    expect(await app.runs.state(runId, 'phase')).toBeUndefined();
    await expect(app.runs.state(runId, 'phase', { timeout: 200 })).rejects.toThrow(TimeoutError);
    await expect(app.runs.state(runId, 'phase', { timeout: 200 })).rejects.toThrow(`run ${runId} published no 'phase' within 200ms`);

    // A waiter and a follower, both before the run goes on.
    const phase = app.runs.state(runId, 'phase', { timeout: '30s' });
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const c of app.runs.stream(runId, 'tokens')) got.push(c);
    })();
    await until('the follower to read what is there', () => got.length === 2);
    expect(got).toEqual(['a', 'b']);
    await engine.signal(runId, 'go', null);
    expect(await phase).toBe('second');
    await reading;
    expect(got).toEqual(['a', 'b', 'c', { at: new Date(0) }]);
    expect((await app.result(runId, { timeout: '20s' })).output).toBe('done');
    await until('the app to see every step event', () => seenByApp.length >= seenHere.length);
    expect(seenByApp).toEqual(JSON.parse(JSON.stringify(seenHere)));
    expect(seenByApp.map((e) => e.type)).toEqual([
      'state.published', 'stream.chunk', 'stream.chunk', 'step.waiting', 'step.signaled', 'state.published', 'state.published', 'stream.chunk', 'stream.chunk', 'stream.closed',
    ]);
    offHere();
    offApp();

    // After the end: from an offset, the latest value (decoded), every key as the engine has it.
    const tail: unknown[] = [];
    for await (const c of app.runs.stream(runId, 'tokens', { from: 2 })) tail.push(c);
    expect(tail).toEqual(['c', { at: new Date(0) }]);
    expect(await app.runs.state(runId, 'progress')).toEqual(new Map([['done', new Date(0)]]));
    expect(await app.runs.published(runId)).toEqual(await engine.runs.published(runId));
    expect((await app.runs.published(runId)).map((p) => p.key)).toEqual(['progress', 'phase']);
    // The run ended without the key: nothing can come, answered at once despite the timeout.
    expect(await app.runs.state(runId, 'never', { timeout: '1h' })).toBeUndefined();
    const none: unknown[] = [];
    for await (const c of app.runs.stream(runId, 'none')) none.push(c);
    expect(none).toEqual([]);

    // The engine's own errors, one line each.
    await expect(app.runs.state(runId, 'bad#key')).rejects.toThrow(/^runs\.state key: no control characters and no '#'$/);
    await expect(app.runs.state('no-such-run', 'progress')).rejects.toThrow(UnknownRunError);
    await expect(app.runs.state(runId, 'phase', { timeout: '3 parsecs' })).rejects.toThrow(ValidationError);
    expect(() => app.runs.stream(runId, '')).toThrow(/^runs\.stream name: /);
    expect(() => app.runs.stream(runId, 'tokens', { from: -1 })).toThrow(/^runs\.stream options\.from: /);
    const unknown = (async () => {
      for await (const _ of app.runs.stream('no-such-run', 'tokens')) void _;
    })();
    await expect(unknown).rejects.toThrow(UnknownRunError);

    // The frames are checked before anything is read, and the token still guards them.
    const info = JSON.parse(readFileSync(join(dataDir, 'serve.json'), 'utf8')) as { port: number; token: string };
    const post = (frame: unknown, token = info.token) =>
      fetch(`http://127.0.0.1:${info.port}/control`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(frame) });
    const badOffset = await post({ op: 'stream', runId, name: 'tokens', from: -1, waitMs: 0 });
    expect(badOffset.status).toBe(400);
    expect(((await badOffset.json()) as { error: { message: string } }).error.message).toMatch(/^request\.from: /);
    expect((await post({ op: 'stream', runId, name: 'tokens', from: 0, waitMs: 3_600_000 })).status).toBe(400);
    expect((await post({ op: 'state', runId, key: 'phase', timeoutMs: -5 })).status).toBe(400);
    expect((await post({ op: 'state', runId, key: 'phase' }, 'x'.repeat(43))).status).toBe(401);
    // What is there answers at once, in the stored form (lossless: the Date is tagged).
    const ok = await post({ op: 'stream', runId, name: 'tokens', from: 3, waitMs: 0 });
    const stored = (await engine.runs.get(runId)).steps.find((s) => s.name === 'stream:tokens#4')!.result as { chunk: unknown };
    expect(await ok.json()).toEqual({ result: { chunks: [stored.chunk], next: 4, done: true } });
  }, 120_000);

  it("an attached app reads a step body's chunks as written (provisional), with the rewind of a failed attempt, then the stored ones", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), `tranquil-attach-prov-${backend}-`));
    dirs.push(dataDir);
    let write!: () => void;
    let fail!: () => void;
    gates = { write: new Promise<void>((r) => (write = r)), fail: new Promise<void>((r) => (fail = r)) };
    const engine = await createEngine({ backend, dataDir, workflows: [bodyTokens], control: true });
    engines.push(engine);
    await engine.start();
    const app = await attach({ dataDir });
    const runId = 'prov-1';
    await app.trigger('body-tokens', null, { runId });
    const items: unknown[] = [];
    const reading = (async () => {
      for await (const it of app.runs.stream(runId, 'tokens', { provisional: true })) items.push(it);
    })();
    // The reader subscribes at its first read (a loopback round trip): then the body writes.
    await new Promise((r) => setTimeout(r, 1000));
    write();
    await until('the first attempt\'s chunks as written', () => items.length === 2);
    fail();
    await reading;
    const p = (offset: number, chunk: unknown, attempt: number) => ({ offset, chunk, provisional: { step: 'gen', attempt } });
    expect(items).toEqual([p(0, 'x1', 1), p(1, 'x2', 1), { rewind: 0 }, p(0, 'y1', 2), p(1, 'y2', 2), p(2, new Map([['n', 3]]), 2)]);
    // A plain reader through the app: the stored chunks only.
    const plain: unknown[] = [];
    for await (const c of app.runs.stream(runId, 'tokens')) plain.push(c);
    expect(plain).toEqual(['y1', 'y2', new Map([['n', 3]])]);
  }, 120_000);
});
