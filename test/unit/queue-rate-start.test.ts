// A rate limit counts a step body's start when the body begins (src/runtime/queues.ts), not
// when the slot was granted earlier: the simulation's seeds 5209279 and 1124 (a waiter
// recovered at start was granted before its run asked again, so its body began a window
// later) and 1477 (the grant's durable write outlasted the period) let more bodies start in
// one window than the limit. Driven here through QueueManager with a store whose writes the
// test completes, on a manual clock.
import { describe, expect, it } from 'vitest';
import { QueueManager } from '../../src/runtime/queues.ts';
import type { QueueSpec } from '../../src/domain/rate-limit.ts';
import type { QueuedStep, QueueStore, RecoveredQueues } from '../../src/ports/queue-store.ts';

const PERIOD = 1000;
const spec: QueueSpec = { name: 'llm', limits: { concurrency: 5, rate: { limit: 1, periodMs: PERIOD } } };

function harness(recovered: QueuedStep[] = []) {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  /** Grant writes not completed yet (the test completes them: a slow commit). */
  const writes: (() => void)[] = [];
  let holdWrites = false;
  const store: QueueStore = {
    define: async () => {},
    recover: (): RecoveredQueues => ({ waiting: recovered, held: [], starts: [], maxOrder: recovered.length }),
    wait: async () => {},
    grant: () => (holdWrites ? new Promise<void>((resolve) => writes.push(resolve)) : Promise.resolve()),
    release: () => {},
    writeHolds: () => {},
    leave: () => {},
    prune: () => {},
    restamp: () => {},
  };
  const m = new QueueManager(store, () => now, [spec], {
    setTimer: (at, fn) => {
      const t = { at, fn };
      timers.push(t);
      return () => void timers.splice(timers.indexOf(t), 1);
    },
  });
  /** Body starts: [step, clock when its slot was handed, the hold's grantedAt]. */
  const bodies: [string, number, number][] = [];
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return {
    m,
    bodies,
    settle,
    slowWrites: () => void (holdWrites = true),
    completeWrites: () => writes.splice(0).forEach((w) => w()),
    async advance(to: number) {
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > to) break;
        timers.shift();
        now = t.at;
        t.fn();
        await settle();
      }
      now = to;
      await settle();
    },
    ask(runId: string): void {
      void m.acquire({ queue: 'llm', key: '', runId, step: 'call' }, new AbortController().signal).then((h) => {
        bodies.push([runId, now, h.grantedAt ?? -1]);
      });
    },
  };
}

/** No window of PERIOD holds two body starts (limit 1). */
function assertRate(bodies: [string, number, number][]): void {
  const at = bodies.map((b) => b[1]).sort((a, b) => a - b);
  for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `starts at ${at.join(', ')}`).toBeGreaterThanOrEqual(PERIOD);
}

describe('queue rate limit: a start counts when its body begins', () => {
  it('a waiter recovered at start is not granted before its run asks again', async () => {
    const h = harness([
      { queue: 'llm', key: '', runId: 'r1', step: 'call', order: 1, at: 0 },
      { queue: 'llm', key: '', runId: 'r2', step: 'call', order: 2, at: 0 },
    ]);
    await h.m.start();
    // The runs come back only later (the engine was busy): r1's body must not start on a
    // grant counted at 0, beside r2's counted at 1000.
    await h.advance(PERIOD);
    h.ask('r1');
    h.ask('r2');
    await h.settle();
    await h.advance(3 * PERIOD);
    expect(h.bodies.map((b) => b[0]).sort()).toEqual(['r1', 'r2']);
    assertRate(h.bodies);
    // Its startedAt is the start the limit counted: when its body began.
    for (const [, at, grantedAt] of h.bodies) expect(grantedAt).toBe(at);
    // r1 kept its place: first in line when both asked.
    expect(h.bodies[0]![0]).toBe('r1');
  });

  it('a grant whose write outlasts the period counts from when its body begins', async () => {
    const h = harness();
    await h.m.start();
    h.slowWrites();
    h.ask('a');
    await h.settle();
    // The commit is slow (or the process was paused): the clock passes the period first.
    await h.advance(5 * PERIOD);
    h.ask('b');
    await h.settle();
    h.completeWrites(); // a's body begins now, at 5000
    await h.settle();
    await h.advance(5 * PERIOD + 10);
    h.completeWrites();
    await h.advance(7 * PERIOD);
    h.completeWrites();
    await h.settle();
    expect(h.bodies.map((b) => b[0])).toEqual(['a', 'b']);
    assertRate(h.bodies);
    expect(h.bodies[0]![2]).toBe(5 * PERIOD);
  });
});
