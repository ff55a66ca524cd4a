// Conformance scenarios for live output (issue 41, docs/live-output.md): published state
// (ctx.publish, runs.state, runs.published) and per-step events (runs.subscribe). Called from
// runConformance(): the same on every backend.
import { expect } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import type { StepEvent } from '../../src/runtime/step-events.ts';
import type { StreamItem } from '../../src/runtime/live-output.ts';
import type { ScenarioKit } from './triggers.ts';

export function liveOutputScenarios({ test, boot, restart, until }: ScenarioKit, backend: string): void {
  test('published state: read while the run waits and after it ends, the latest value wins, a restart republishes nothing, Map and Date survive', async () => {
    const refused: string[] = [];
    const wf = workflow('progress', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        for (const [key, value] of [['bad#key', 1], ['', 1], ['fn', () => 1]] as const) {
          await ctx.publish(key, value).catch((err: Error) => void refused.push(`${err.name}: ${err.message}`));
        }
        await ctx.publish('progress', { done: 1, of: 3 });
        await step.do('work', () => 'w');
        await ctx.publish('progress', { done: 2, of: 3 });
        await ctx.publish('detail', new Map([['at', new Date(0)]]));
        const go = await step.waitForEvent('go');
        await ctx.publish('progress', { done: 3, of: 3, go });
        return 'ok';
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('progress', null);
    // Waited for: the first publish of the key.
    expect(await engine.runs.state(runId, 'progress', { timeout: '20s' })).toBeDefined();
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    expect(await engine.runs.state(runId, 'progress')).toEqual({ done: 2, of: 3 });
    const detail = await engine.runs.state<Map<string, Date>>(runId, 'detail');
    expect(detail).toBeInstanceOf(Map);
    expect(detail!.get('at')).toEqual(new Date(0));
    expect(await engine.runs.state(runId, 'never')).toBeUndefined();
    expect(refused).toHaveLength(3);
    expect(refused[0]).toMatch(/^ValidationError: ctx\.publish key: no control characters and no '#'$/);
    expect(refused[1]).toMatch(/^ValidationError: ctx\.publish key: must not be empty$/);
    expect(refused[2]).toMatch(/^ValidationError: ctx\.publish\('fn'\) value/);
    // A restart replays the run: nothing is published again, the state is the same.
    const again = await restart(engine, [wf], dir);
    await until('the run to wait again', async () => (await again.runs.get(runId)).status === 'waiting');
    expect(await again.runs.state(runId, 'progress')).toEqual({ done: 2, of: 3 });
    await again.signal(runId, 'go', 'yes');
    const view = await again.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(await again.runs.state(runId, 'progress')).toEqual({ done: 3, of: 3, go: 'yes' });
    expect(view.steps.filter((s) => s.kind === 'publish').map((s) => s.name)).toEqual(['publish:progress', 'publish:progress#2', 'publish:detail', 'publish:progress#3']);
    const all = await again.runs.published(runId);
    expect(all.map((p) => [p.key, p.step])).toEqual([['progress', 'publish:progress#3'], ['detail', 'publish:detail']]);
    expect(all[0]!.publishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    // A finished run that never published the key: answered at once, not waited for.
    expect(await again.runs.state(runId, 'never', { timeout: '1h' })).toBeUndefined();
    const why = await again.runs.explain(runId);
    expect(why.details).toContain("published state: 'progress', 'detail' (read with `tranquil runs state " + runId + ' <key>`)');
    await expect(again.runs.state(runId, 'a#b')).rejects.toThrow(/^runs\.state key: no control characters and no '#'$/);
    await expect(again.runs.state(runId, 'k', { timeout: 'soon' })).rejects.toThrow(/runs\.state timeout/);
    await expect(again.runs.state('no-such-run', 'k')).rejects.toThrow(/no-such-run/);
  });

  test('a wait for a published key times out with TimeoutError while the run publishes nothing', async () => {
    const wf = workflow('quiet', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('go'));
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('quiet', null);
    const t0 = Date.now();
    await expect(engine.runs.state(runId, 'progress', { timeout: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await engine.runs.cancel(runId);
  });

  test('step events: a run\'s events in order, once per real attempt; a restart replays none of them', async () => {
    let fail = true;
    const wf = workflow('evented', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        await step.do('flaky', { retries: { limit: 2, delay: 50, backoff: 'constant', jitter: false } }, () => {
          if (fail) {
            fail = false;
            throw new Error('once');
          }
          return 1;
        });
        await ctx.publish('k', 1);
        await step.sleep('nap', 100);
        await step.waitForEvent('go', { timeout: '1h' });
        await step.do('last', () => 2);
        return 'ok';
      });
    });
    const { engine, dir } = await boot([wf]);
    const runId = 'evented-1';
    const follow = (e: Engine) => {
      const one: StepEvent[] = [];
      const every: StepEvent[] = [];
      const offs = [e.runs.subscribe((ev) => void one.push(ev), { runId }), e.runs.subscribe((ev) => void every.push(ev))];
      return { one, every, off: () => offs.forEach((f) => f()) };
    };
    const first = follow(engine);
    await engine.trigger('evented', null, { runId });
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
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
    const again = await restart(engine, [wf], dir);
    const second = follow(again);
    await until('the run to wait again', async () => (await again.runs.get(runId)).status === 'waiting');
    await again.signal(runId, 'go', null);
    expect((await again.result(runId, { timeout: '20s' })).status).toBe('succeeded');
    await until('the last step\'s event', () => second.one.some((e) => e.type === 'step.succeeded' && e.step === 'last'));
    expect(shape(second.one)).toEqual([
      ['step.signaled', 'go', null],
      ['step.started', 'last', 1],
      ['step.succeeded', 'last', 1],
    ]);
    // Unsubscribed: the first engine's lists got nothing more.
    expect(first.one).toHaveLength(7);
    expect(() => again.runs.subscribe('nope' as never)).toThrow(/^runs\.subscribe: handler must be a function$/);
  });
  test('step events from an offset: Restate keeps a run\'s events and reads them again from 0 after a restart, both executions in order; SQLite refuses `from` in one line', async () => {
    const wf = workflow('logged-events', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('a', () => 1);
        await step.waitForEvent('go', { timeout: '1h' });
        await step.do('b', () => 2);
        return 'ok';
      });
    });
    // The log is kept where there are other processes to serve (restate.liveAcrossReplicas,
    // on by default with triggers: 'restate' or an external ingressUrl): on here.
    const { engine, dir } = await boot([wf], undefined, { liveAcrossReplicas: true });
    const runId = 'logged-1';
    expect(() => engine.runs.subscribe(() => {}, { from: 0 })).toThrow(/^runs\.subscribe options\.from: reads one run's event log: give options\.runId too$/);
    expect(() => engine.runs.subscribe(() => {}, { runId, from: -1 })).toThrow(/^runs\.subscribe options/);
    if (backend === 'sqlite') {
      expect(() => engine.runs.subscribe(() => {}, { runId, from: 0 })).toThrow(/^runs\.subscribe options\.from: this backend keeps no step events/);
      return;
    }
    await engine.trigger('logged-events', null, { runId });
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    const again = await restart(engine, [wf], dir, { liveAcrossReplicas: true });
    await until('the run to wait again', async () => (await again.runs.get(runId)).status === 'waiting');
    await again.signal(runId, 'go', null);
    expect((await again.result(runId, { timeout: '20s' })).status).toBe('succeeded');
    const got: StepEvent[] = [];
    const off = again.runs.subscribe((e) => void got.push(e), { runId, from: 0 });
    await until('the logged events', () => got.length >= 6);
    off();
    expect(got.map((e) => [e.type, e.step, e.attempt ?? null])).toEqual([
      ['step.started', 'a', 1],
      ['step.succeeded', 'a', 1],
      ['step.waiting', 'go', null],
      ['step.signaled', 'go', null],
      ['step.started', 'b', 1],
      ['step.succeeded', 'b', 1],
    ]);
  });

  test('streams: a reader gets every chunk in order, live while the run goes on, ending at close; read again from offset 0 after a restart, no duplicate or missing chunk', async () => {
    const wf = workflow('tokens', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const out = ctx.stream('tokens');
        await out.write('Hel');
        await out.write(new Map([['n', 2n]]));
        await step.waitForEvent('more');
        await out.write('lo');
        await out.close();
        return out.write('late').then(() => 'written', (err: Error) => err.message);
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('tokens', null);
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const c of engine.runs.stream(runId, 'tokens')) got.push(c);
    })();
    await until('two chunks read live', () => got.length === 2);
    expect(got).toEqual(['Hel', new Map([['n', 2n]])]);
    await engine.signal(runId, 'more', null);
    await reading;
    expect(got).toEqual(['Hel', new Map([['n', 2n]]), 'lo']);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.output).toBe("ctx.stream('tokens'): the stream is closed; nothing more can be written to it");
    const again = await restart(engine, [wf], dir);
    const read = async (from?: number) => {
      const all: unknown[] = [];
      for await (const c of again.runs.stream(runId, 'tokens', from === undefined ? {} : { from })) all.push(c);
      return all;
    };
    expect(await read()).toEqual(['Hel', new Map([['n', 2n]]), 'lo']);
    expect(await read(2)).toEqual(['lo']);
    // A stream the run never wrote ends at once: the run has ended.
    const none: unknown[] = [];
    for await (const c of again.runs.stream(runId, 'other')) none.push(c);
    expect(none).toEqual([]);
    expect(() => again.runs.stream(runId, 'a#b')).toThrow(/^runs\.stream name: no control characters and no '#'$/);
  }, 60_000);

  test('streams from a step body: chunks read live (provisional) before the step ends, stored with its result, read plain once committed', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const wf = workflow('body-tokens', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const text = await step.do('generate', async ({ stream }) => {
          const out = stream('tokens');
          out.write('Hel');
          out.write(new Map([['n', 1n]]));
          await held;
          out.write('lo');
          return 'Hello';
        });
        await ctx.stream('tokens').close();
        return text;
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('body-tokens', null);
    const live: StreamItem[] = [];
    const plain: unknown[] = [];
    const reading = Promise.all([
      (async () => {
        for await (const it of engine.runs.stream(runId, 'tokens', { provisional: true })) live.push(it);
      })(),
      (async () => {
        for await (const c of engine.runs.stream(runId, 'tokens')) plain.push(c);
      })(),
    ]);
    await until('two chunks read live', () => live.length === 2);
    // The body is still running: nothing is committed, the plain reader has nothing yet. (On
    // Restate the run's view can lag a moment behind its body: its state writes share the
    // partition with the run's event log appends; held by the gate, it reads running soon.)
    await until('the run to read running', async () => (await engine.runs.get(runId)).status === 'running');
    const during = await engine.runs.get(runId);
    expect(during.status).toBe('running');
    expect(during.steps.find((st) => st.name === 'generate')?.status ?? 'running').toBe('running');
    expect(plain).toEqual([]);
    expect(live).toEqual([
      { offset: 0, chunk: 'Hel', provisional: { step: 'generate', attempt: 1 } },
      { offset: 1, chunk: new Map([['n', 1n]]), provisional: { step: 'generate', attempt: 1 } },
    ]);
    release();
    await reading;
    expect(live.map((it) => ('rewind' in it ? `rewind ${it.rewind}` : `${it.offset}`))).toEqual(['0', '1', '2']);
    expect(plain).toEqual(['Hel', new Map([['n', 1n]]), 'lo']);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.output).toBe('Hello');
  }, 60_000);

  test('a retried body\'s chunks: 3 written then failed, 5 on the retry: readers see a rewind live and exactly the 5 stored, once; a restart replays them, writing and telling nothing again', async () => {
    let release!: () => void;
    const start = new Promise<void>((r) => (release = r));
    const bodies: number[] = [];
    const refusals: string[] = [];
    const wf = workflow('retried-tokens', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        await step.do('generate', { retries: { limit: 3, delay: 50, backoff: 'constant', jitter: false } }, async ({ stream, attempt }) => {
          bodies.push(attempt);
          const out = stream('tokens');
          if (attempt === 1) {
            await start;
            for (const t of ['a1', 'a2', 'a3']) out.write(t);
            try {
              out.write(() => 1);
            } catch (err) {
              refusals.push((err as Error).message);
            }
            throw new Error('the model dropped the connection');
          }
          for (const t of ['b1', 'b2', 'b3', 'b4', 'b5']) out.write(t);
          return 5;
        });
        await ctx.stream('tokens').close();
        await step.waitForEvent('more');
        return 'ok';
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('retried-tokens', null);
    const live: StreamItem[] = [];
    const plain: unknown[] = [];
    const reading = Promise.all([
      (async () => {
        for await (const it of engine.runs.stream(runId, 'tokens', { provisional: true })) live.push(it);
      })(),
      (async () => {
        for await (const c of engine.runs.stream(runId, 'tokens')) plain.push(c);
      })(),
    ]);
    // Both readers subscribed at their first next(), above: let the first attempt write.
    release();
    await until('the run to wait after the step', async () => (await engine.runs.get(runId)).status === 'waiting');
    await reading;
    expect(bodies).toEqual([1, 2]);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(/^info\.stream\('tokens'\) chunk.*function/);
    const p = (offset: number, chunk: string, attempt: number) => ({ offset, chunk, provisional: { step: 'generate', attempt } });
    expect(live).toEqual([
      p(0, 'a1', 1), p(1, 'a2', 1), p(2, 'a3', 1),
      { rewind: 0 },
      p(0, 'b1', 2), p(1, 'b2', 2), p(2, 'b3', 2), p(3, 'b4', 2), p(4, 'b5', 2),
    ]);
    // The plain reader never saw the failed attempt's chunks.
    expect(plain).toEqual(['b1', 'b2', 'b3', 'b4', 'b5']);
    // A restart replays the step: its body does not run again, no chunk is written or told again.
    const again = await restart(engine, [wf], dir);
    const told: StepEvent[] = [];
    const off = again.runs.subscribe((e) => void told.push(e), { runId });
    await until('the run to wait again', async () => (await again.runs.get(runId)).status === 'waiting');
    await again.signal(runId, 'more', null);
    expect((await again.result(runId, { timeout: '20s' })).status).toBe('succeeded');
    off();
    expect(bodies).toEqual([1, 2]);
    expect(told.map((e) => e.type)).toEqual(['step.signaled']);
    const read = async (from = 0) => {
      const all: unknown[] = [];
      for await (const c of again.runs.stream(runId, 'tokens', { from })) all.push(c);
      return all;
    };
    expect(await read()).toEqual(['b1', 'b2', 'b3', 'b4', 'b5']);
    expect(await read(3)).toEqual(['b4', 'b5']);
    const after: StreamItem[] = [];
    for await (const it of again.runs.stream(runId, 'tokens', { provisional: true })) after.push(it);
    expect(after).toEqual(['b1', 'b2', 'b3', 'b4', 'b5'].map((chunk, offset) => ({ offset, chunk })));
    // The step's recorded result is the body's value (its chunks travel with it, stored once).
    const view = await again.runs.get(runId);
    expect(view.steps.filter((st) => st.kind === 'stream').map((st) => st.name)).toEqual(['stream:tokens']);
  }, 60_000);
}
