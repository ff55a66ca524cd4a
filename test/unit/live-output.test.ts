// The pure parts of live output (docs/live-output.md): which publish holds a key's latest
// value, a stream's chunks from its journal, key rules, and the step-event hub's delivery.
import { describe, expect, it } from 'vitest';
import { checkStateKey, publishedState, streamNames, streamOf } from '../../src/domain/published-state.ts';
import type { RunView, StepView } from '../../src/domain/run-view.ts';
import { liveOutputApi } from '../../src/runtime/live-output.ts';
import { StepEvents, type StepEvent } from '../../src/runtime/step-events.ts';

const pub = (seq: number, key: string, value: unknown, status: StepView['status'] = 'succeeded'): StepView =>
  ({ seq, name: `publish:${key}#${seq}`, kind: 'publish', status, attempts: 1, result: { key, value } as never, endedAt: `2026-01-01T00:00:0${seq}.000Z` });

describe('published state', () => {
  it('a key holds the value of its last publish by position, whatever order the view lists them in', () => {
    const steps = [pub(3, 'p', 'third'), pub(0, 'p', 'first'), pub(1, 'q', 'q1'), { seq: 2, name: 'x', kind: 'do', status: 'succeeded', attempts: 1, result: { key: 'p', value: 'not a publish' } } as StepView];
    expect(publishedState(steps).map((p) => [p.key, p.value, p.step])).toEqual([['p', 'third', 'publish:p#3'], ['q', 'q1', 'publish:q#1']]);
  });

  it('keys are refused in one line naming the rule', () => {
    expect(() => checkStateKey('a#b', 'k')).toThrow(/^k: no control characters and no '#'$/);
    expect(() => checkStateKey(' a', 'k')).toThrow(/^k: no whitespace at either end$/);
    expect(() => checkStateKey('x'.repeat(201), 'k')).toThrow(/^k: at most 200 characters$/);
    expect(() => checkStateKey(7, 'k')).toThrow(/^k: /);
    expect(checkStateKey('progress.rows', 'k')).toBe('progress.rows');
  });

  it('a stream is its chunks in position order, closed by its close entry; other streams apart', () => {
    const w = (seq: number, result: unknown): StepView => ({ seq, name: `stream:s#${seq}`, kind: 'stream', status: 'succeeded', attempts: 1, result: result as never });
    expect(streamOf([w(2, { stream: 's', chunk: 'b' }), w(0, { stream: 's', chunk: 'a' }), w(1, { stream: 't', chunk: 'x' })], 's')).toMatchObject({ chunks: ['a', 'b'], closed: false });
    expect(streamOf([w(0, { stream: 's', chunk: 'a' }), w(1, { stream: 's', closed: true })], 's')).toMatchObject({ chunks: ['a'], closed: true });
  });

  it('the streams of a run are named in the order first written (the panel lists them so); a failed or foreign entry names none', () => {
    const w = (seq: number, result: unknown, status: StepView['status'] = 'succeeded'): StepView => ({ seq, name: `x#${seq}`, kind: 'stream', status, attempts: 1, result: result as never });
    const other = { seq: 1, name: 'd', kind: 'do', status: 'succeeded', attempts: 1, result: { stream: 'not a stream' } } as StepView;
    expect(streamNames([w(3, { stream: 'b', closed: true }), w(2, { stream: 'a', chunk: 1 }), other, w(0, { stream: 'b', chunk: 0 }), w(4, { stream: 'c', chunk: 2 }, 'failed')])).toEqual(['b', 'a']);
  });
});

describe('step event hub', () => {
  const ev = (runId: string, step: string): StepEvent => ({ type: 'step.started', runId, workflow: 'w', step, kind: 'do', at: 0, attempt: 1 });
  const tick = () => new Promise((r) => setTimeout(r, 0));

  it('delivers in emission order to one run\'s and to every run\'s subscribers; a throwing handler breaks no one; unsubscribe stops delivery', async () => {
    const warned: string[] = [];
    const hub = new StepEvents({ log: (_level: string, m: string) => void warned.push(m) } as never);
    const one: string[] = [];
    const all: string[] = [];
    expect(hub.listening('r1')).toBe(false);
    const offOne = hub.subscribe((e) => void one.push(e.step), 'r1');
    hub.subscribe((e) => void all.push(`${e.runId}:${e.step}`));
    hub.subscribe(() => {
      throw new Error('bad handler');
    }, 'r1');
    expect(hub.listening('r1')).toBe(true);
    hub.emit(ev('r1', 'a'));
    hub.emit(ev('r2', 'x'));
    hub.emit(ev('r1', 'b'));
    await tick();
    expect(one).toEqual(['a', 'b']);
    expect(all).toEqual(['r1:a', 'r2:x', 'r1:b']);
    expect(warned).toEqual(['step event handler of step.started for run r1 threw: bad handler', 'step event handler of step.started for run r1 threw: bad handler']);
    offOne();
    hub.emit(ev('r1', 'c'));
    await tick();
    expect(one).toEqual(['a', 'b']);
  });
});

describe('a stream follower in the writing process', () => {
  // The run's journal as the view reads it, grown by `write`, which also emits the event
  // the RunSession emits after the chunk's commit.
  const setup = () => {
    const hub = new StepEvents();
    const steps: StepView[] = [];
    let status: RunView['status'] = 'running';
    let views = 0;
    const view = async (runId: string): Promise<RunView> => {
      views++;
      return { runId, workflow: 'w', status, steps: [...steps] } as unknown as RunView;
    };
    const api = liveOutputApi(view, hub, (id) => String(id));
    const write = (chunk: unknown, opts: { silent?: boolean } = {}) => {
      const offset = steps.filter((s) => s.kind === 'stream').length;
      steps.push({ seq: steps.length, name: `stream:s#${offset + 1}`, kind: 'stream', status: 'succeeded', attempts: 1, result: { stream: 's', chunk } as never });
      if (!opts.silent) hub.emit({ type: 'stream.chunk', runId: 'r1', workflow: 'w', step: `stream:s#${offset + 1}`, kind: 'stream', at: 0, key: 's', offset, chunk: chunk as never });
    };
    const close = () => {
      const offset = steps.filter((s) => s.kind === 'stream').length;
      steps.push({ seq: steps.length, name: `stream:s#${offset + 1}`, kind: 'stream', status: 'succeeded', attempts: 1, result: { stream: 's', closed: true } as never });
      hub.emit({ type: 'stream.closed', runId: 'r1', workflow: 'w', step: `stream:s#${offset + 1}`, kind: 'stream', at: 0, key: 's', offset });
      status = 'succeeded';
    };
    return { api, write, close, views: () => views };
  };
  const tick = () => new Promise((r) => setTimeout(r, 0));

  it('takes each chunk from its event, in order, without reading the run once per chunk; a chunk written unheard is read from the run', async () => {
    const s = setup();
    s.write('a');
    s.write('b');
    const got: unknown[] = [];
    const done = (async () => {
      for await (const c of s.api.stream('r1', 's')) got.push(c);
    })();
    await tick();
    for (let i = 0; i < 200; i++) {
      s.write(`c${i}`);
      if (i % 50 === 0) await tick();
    }
    await tick();
    s.write('gap', { silent: true }); // written where this process heard nothing of it
    s.write('after-gap');
    await tick();
    s.close();
    await done;
    expect(got).toEqual(['a', 'b', ...Array.from({ length: 200 }, (_, i) => `c${i}`), 'gap', 'after-gap']);
    // One read at the start, one for the gap, and at most one for the close: not one per chunk.
    expect(s.views()).toBeLessThanOrEqual(4);
  });
});

describe('a provisional stream reader', () => {
  // A body's attempt writes provisional chunks (events only); its commit adds the chunks to
  // the view and emits them as stream.chunk events, as the RunSession does.
  const setup = () => {
    const hub = new StepEvents();
    const steps: StepView[] = [];
    let status: RunView['status'] = 'running';
    const view = async (runId: string): Promise<RunView> => ({ runId, workflow: 'w', status, steps: [...steps] }) as unknown as RunView;
    const api = liveOutputApi(view, hub, (id) => String(id));
    let stored = 0;
    const base = { runId: 'r1', workflow: 'w', kind: 'do' as const, at: 0, key: 's' };
    const provisional = (step: string, attempt: number, index: number, chunk: string) => {
      hub.hold('r1', 's', step, attempt, chunk);
      hub.emit({ ...base, type: 'stream.provisional', step, attempt, offset: index, chunk });
    };
    const commit = (step: string, attempt: number, chunks: string[]) => {
      hub.release('r1', step, attempt);
      steps.push({ seq: steps.length, name: step, kind: 'do', status: 'succeeded', attempts: attempt, result: { $tqs: { c: chunks.map((c) => ['s', c]) } } as never });
      for (const chunk of chunks) hub.emit({ ...base, type: 'stream.chunk', step, attempt, offset: stored++, chunk });
    };
    const end = () => {
      status = 'succeeded';
      hub.emit({ ...base, type: 'stream.closed', step: 'stream:s', kind: 'stream', offset: stored });
    };
    return { api, hub, provisional, commit, end };
  };
  const tick = () => new Promise((r) => setTimeout(r, 0));
  const read = (api: ReturnType<typeof setup>['api'], got: unknown[]) => (async () => {
    for await (const it of api.stream('r1', 's', { provisional: true })) got.push('rewind' in it ? `<rewind ${it.rewind}>` : `${it.offset}:${String(it.chunk)}${it.provisional ? '?' : ''}`);
  })();

  it('a reader that comes mid-attempt starts from the attempt\'s first chunk; the commit confirms without repeating', async () => {
    const s = setup();
    s.provisional('gen', 1, 0, 'a');
    s.provisional('gen', 1, 1, 'b');
    const got: unknown[] = [];
    const done = read(s.api, got);
    await tick();
    s.provisional('gen', 1, 2, 'c');
    await tick();
    s.commit('gen', 1, ['a', 'b', 'c']);
    s.end();
    await done;
    expect(got).toEqual(['0:a?', '1:b?', '2:c?']);
  });

  it('another writer\'s chunk stored where provisional ones were shown: a rewind to it, then what is stored', async () => {
    const s = setup();
    const got: unknown[] = [];
    const done = read(s.api, got);
    await tick();
    s.provisional('slow', 1, 0, 'x');
    s.provisional('slow', 1, 1, 'y');
    await tick();
    s.commit('fast', 1, ['f']);
    await tick();
    s.commit('slow', 1, ['x', 'y']);
    s.end();
    await done;
    expect(got).toEqual(['0:x?', '1:y?', '<rewind 0>', '0:f', '1:x', '2:y']);
  });

  it('provisional chunks never stored are withdrawn when the stream ends', async () => {
    const s = setup();
    const got: unknown[] = [];
    const done = read(s.api, got);
    await tick();
    s.provisional('gen', 1, 0, 'a');
    await tick();
    s.end();
    await done;
    expect(got).toEqual(['0:a?', '<rewind 0>']);
  });
});
