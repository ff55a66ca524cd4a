// The pure limiter (src/domain/rate-limit.ts) and queue() validation (sdk/queue.ts).
import { describe, expect, it } from 'vitest';
import { QueueState, StartLog, describeQueueWait, type Waiting } from '../../src/domain/rate-limit.ts';
import { queue, workflow, manual } from '@tranquil/sdk';
import { normalizeStepOptions, resolveStepOptions } from '../../sdk/step-options.ts';

type W = Waiting & { id: string };
const w = (id: string, key: string, order: number): W => ({ id, key, order });

/** Takes every waiter allowed at `now`. */
function drain(s: QueueState<W>, now: number): string[] {
  const out: string[] = [];
  for (let p = s.take(now); p.type === 'start'; p = s.take(now)) out.push(p.waiter.id);
  return out;
}

describe('QueueState', () => {
  it('starts at most `concurrency` at once and one more per release', () => {
    const s = new QueueState<W>({ concurrency: 2 });
    for (let i = 0; i < 5; i++) s.enqueue(w(`r${i}`, '', i));
    expect(drain(s, 0)).toEqual(['r0', 'r1']);
    s.release('');
    expect(drain(s, 0)).toEqual(['r2']);
    expect(s.stats('')).toMatchObject({ running: 2, waiting: 2 });
  });

  it('limits each key and serves keys round-robin: a cold key is not starved by a hot one', () => {
    const s = new QueueState<W>({ concurrency: 1 });
    for (let i = 0; i < 1000; i++) s.enqueue(w(`h${i}`, 'hot', i));
    expect(drain(s, 0)).toEqual(['h0']);
    s.enqueue(w('c0', 'cold', 1000));
    s.release('hot');
    expect(drain(s, 0)).toEqual(['c0']); // the next slot goes to the cold key
    s.release('cold');
    expect(drain(s, 0)).toEqual(['h1']);
  });

  it('keeps per-key concurrency while other keys proceed', () => {
    const s = new QueueState<W>({ concurrency: 10, key: { concurrency: 1 } });
    s.enqueue(w('a0', 'a', 0));
    s.enqueue(w('a1', 'a', 1));
    s.enqueue(w('b0', 'b', 2));
    expect(drain(s, 0).sort()).toEqual(['a0', 'b0']);
    s.release('a');
    expect(drain(s, 0)).toEqual(['a1']);
  });

  it('serves a higher priority first, within a key and across keys; equal priorities keep order and turns', () => {
    const s = new QueueState<W>({ concurrency: 1 });
    const p = (id: string, key: string, order: number, priority?: number): W => ({ ...w(id, key, order), ...(priority === undefined ? {} : { priority }) });
    s.enqueue(p('a-low', 'a', 1, 1));
    s.enqueue(p('a-none', 'a', 2));
    s.enqueue(p('b-mid', 'b', 3, 5));
    s.enqueue(p('a-top', 'a', 4, 9));
    s.enqueue(p('b-mid2', 'b', 5, 5));
    s.enqueue(p('a-mid', 'a', 6, 5));
    s.enqueue(p('b-neg', 'b', 7, -3));
    const got: string[] = [];
    for (let i = 0; i < 7; i++) {
      const [id] = drain(s, 0);
      got.push(id!);
      s.release(id!.startsWith('a') ? 'a' : 'b');
    }
    // a-top (9); then the 5s: b (not served yet) and a alternate, each key in its order.
    expect(got).toEqual(['a-top', 'b-mid', 'a-mid', 'b-mid2', 'a-low', 'a-none', 'b-neg']);
  });

  it('orders waiters of a key by their durable order, whatever order they are re-added in', () => {
    const s = new QueueState<W>({ concurrency: 1 });
    s.enqueue(w('third', 'k', 3));
    s.enqueue(w('first', 'k', 1));
    s.enqueue(w('second', 'k', 2));
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      got.push(...drain(s, 0));
      s.release('k');
    }
    expect(got).toEqual(['first', 'second', 'third']);
  });

  it('a rate limit allows `limit` starts in any window of `period`, then says when the next is due', () => {
    const s = new QueueState<W>({ rate: { limit: 3, periodMs: 1000 } });
    for (let i = 0; i < 7; i++) s.enqueue(w(`r${i}`, '', i));
    expect(drain(s, 0)).toEqual(['r0', 'r1', 'r2']);
    expect(s.take(500)).toEqual({ type: 'later', at: 1000 });
    expect(drain(s, 1000)).toEqual(['r3', 'r4', 'r5']);
    expect(s.take(1999)).toEqual({ type: 'later', at: 2000 });
  });

  it('a sliding window: starts spread over a period edge never exceed the limit in any window', () => {
    const log = new StartLog();
    const rate = { limit: 2, periodMs: 100 };
    const starts: number[] = [];
    for (let t = 0; t < 1000; t += 7) {
      if (log.nextAllowed(rate, t) <= t) {
        log.add(t, rate);
        starts.push(t);
      }
    }
    for (const s of starts) expect(starts.filter((t) => t >= s && t < s + 100).length).toBeLessThanOrEqual(2);
    expect(starts.length).toBeGreaterThanOrEqual(18); // and it does not under-serve: ~2 per 100 ms
  });

  it('past starts loaded from storage count against the limit', () => {
    const s = new QueueState<W>({ rate: { limit: 2, periodMs: 1000 } });
    s.recordPastStart('', 900);
    s.recordPastStart('', 950);
    s.enqueue(w('r', '', 1));
    expect(s.take(1000)).toEqual({ type: 'later', at: 1900 });
  });

  it('removes a waiter that gave up', () => {
    const s = new QueueState<W>({ concurrency: 1 });
    const a = w('a', 'x', 0);
    s.enqueue(a);
    expect(s.remove(a)).toBe(true);
    expect(s.take(0)).toEqual({ type: 'none' });
  });

  it('tryStart: a slot at once only when one is free, nobody waits and no rate limit counts starts', () => {
    const s = new QueueState<W>({ concurrency: 2, key: { concurrency: 1 } });
    expect(s.tryStart('a')).toBe(true);
    expect(s.tryStart('a')).toBe(false); // the key's limit binds
    expect(s.tryStart('b')).toBe(true);
    expect(s.tryStart('c')).toBe(false); // the queue's limit binds
    expect(s.stats('a')).toMatchObject({ running: 2, keyRunning: 1 });
    s.enqueue(w('c0', 'c', 0));
    s.release('a');
    expect(s.tryStart('d')).toBe(false); // c0 waits: nobody passes it
    expect(drain(s, 0)).toEqual(['c0']);
    expect(new QueueState<W>({ rate: { limit: 100, periodMs: 1000 } }).tryStart('')).toBe(false);
    expect(new QueueState<W>({ key: { rate: { limit: 100, periodMs: 1000 } } }).tryStart('')).toBe(false);
  });

  it('describes a wait as `why` says it', () => {
    expect(describeQueueWait({ queue: 'llm', key: 'u7', step: 's', running: 5, limit: 5, ahead: 3 })).toBe("queued in 'llm' for key 'u7': 5 of 5 running, 3 ahead");
  });
});

describe('queue() and step options', () => {
  it('refuses bad limits at definition, in one line naming the field', () => {
    expect(() => queue('q', { concurrency: 0 })).toThrow(/^queue 'q' options\.concurrency: /);
    expect(() => queue('q', { rateLimit: { limit: 0, period: '1m' } })).toThrow(/^queue 'q' options\.rateLimit\.limit: /);
    expect(() => queue('q', { rateLimit: { limit: 5, period: -5 } })).toThrow(/^queue 'q' options\.rateLimit\.period: must be longer than 0/);
    expect(() => queue('q', { rateLimit: { limit: 5, period: 'soon' } })).toThrow(/^queue 'q' options\.rateLimit\.period: /);
    expect(() => queue('q', {})).toThrow(/give concurrency, rateLimit or key/);
    expect(() => queue('1q', { concurrency: 1 })).toThrow(/^queue name: must start with a letter/);
    expect(() => queue('q', { concurrency: 1, burst: 3 } as never)).toThrow(/^queue 'q' options: /);
  });

  it('turns periods into ms', () => {
    expect(queue('llm', { concurrency: 5, rateLimit: { limit: 60, period: '1m' }, key: { concurrency: 1 } }).limits).toEqual({
      concurrency: 5, rate: { limit: 60, periodMs: 60_000 }, key: { concurrency: 1 },
    });
  });

  it('step options: a key must be a string and needs a queue', () => {
    const q = queue('q', { concurrency: 1 });
    expect(normalizeStepOptions('s', { queue: q, key: 'u1' })).toMatchObject({ queue: q, key: 'u1' });
    expect(() => normalizeStepOptions('s', { queue: q, key: 7 as never })).toThrow(/^step 's' options\.key: must be a string/);
    expect(() => normalizeStepOptions('s', { key: 'u1' })).toThrow(/^step 's' options\.key: needs a queue/);
    expect(() => normalizeStepOptions('s', { queue: {} as never })).toThrow(/^step 's' options\.queue: /);
  });

  it('step options of a queue and a key alone (read without the schema) equal the schema\'s reading, defaults included', () => {
    const q = queue('q', { concurrency: 1 });
    const defaults = { retries: { limit: 3, delay: '2s' }, timeout: '5s' };
    const merged = (o: object) => normalizeStepOptions('s', { ...defaults, ...o, retries: { ...defaults.retries } });
    expect(resolveStepOptions('s', defaults, { queue: q, key: 'u1' })).toEqual(merged({ queue: q, key: 'u1' }));
    expect(resolveStepOptions('s', defaults, { queue: 'q' })).toEqual({ ...merged({ queue: 'q' }), key: undefined });
    expect(resolveStepOptions('s', undefined, { queue: q, key: 'u1' })).toEqual(normalizeStepOptions('s', { queue: q, key: 'u1' }));
    // What the schema refuses is still refused, with its words.
    expect(() => resolveStepOptions('s', undefined, { queue: q, key: '' })).toThrow(/^step 's' options\.key: must not be empty/);
    expect(() => resolveStepOptions('s', undefined, { queue: q, key: 7 as never })).toThrow(/^step 's' options\.key: must be a string/);
    expect(() => resolveStepOptions('s', undefined, { queue: '1q' })).toThrow(/^step 's' options\.queue: /);
  });

  it('a workflow lists each queue once', () => {
    const q = queue('q', { concurrency: 1 });
    expect(() => workflow('w', { queues: [q, q] }, (b) => (b.trigger(manual()), b.run(() => 1)))).toThrow(/queue 'q' listed twice/);
    expect(() => workflow('w', { queues: [{}] as never }, (b) => b.run(() => 1))).toThrow(/^workflow 'w' options\.queues\.0: /);
  });
});
