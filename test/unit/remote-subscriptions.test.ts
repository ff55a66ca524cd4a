// The serve's side of an attached app's step-event subscription (src/adapters/http/
// remote-subscriptions.ts): events queue in order and a poll takes them, a waiting poll wakes
// on the next event, a queue nobody drains keeps its newest MAX_QUEUED and counts the rest,
// an app that stops polling loses the subscription (its engine subscription ends), and
// unsubscribe ends it once.
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_QUEUED, RemoteSubscriptions } from '../../src/adapters/http/remote-subscriptions.ts';
import { ValidationError } from '../../src/domain/errors.ts';
import type { StepEvent, StepEventHandler } from '../../src/runtime/step-events.ts';

/** engine.runs.subscribe's stand-in: the handlers it holds, and who asked for which run. */
function fakeRuns() {
  const handlers = new Map<StepEventHandler, string | undefined>();
  return {
    handlers,
    subscribe: (h: StepEventHandler, o: { runId?: string } = {}) => {
      handlers.set(h, o.runId);
      return () => void handlers.delete(h);
    },
    emit: (n: number) => {
      for (const h of handlers.keys()) void h({ type: 'step.started', runId: 'r', workflow: 'w', step: `s${n}`, kind: 'do', at: n, attempt: 1 } satisfies StepEvent);
    },
  };
}

const open: RemoteSubscriptions[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

describe('remote step-event subscriptions', () => {
  it('queues events in order, wakes a waiting poll, bounds the queue, and ends on unsubscribe', async () => {
    const runs = fakeRuns();
    const subs = new RemoteSubscriptions(runs);
    open.push(subs);
    const { subscriptionId } = subs.subscribe('r');
    expect([...runs.handlers.values()]).toEqual(['r']);
    runs.emit(1);
    runs.emit(2);
    expect(await subs.events(subscriptionId, 0)).toMatchObject({ events: [{ step: 's1' }, { step: 's2' }], missed: 0 });
    // A poll under way gets the next event when it comes, not at its timeout.
    const t0 = Date.now();
    const waiting = subs.events(subscriptionId, 20_000);
    setTimeout(() => runs.emit(3), 20);
    expect(await waiting).toMatchObject({ events: [{ step: 's3' }], missed: 0 });
    expect(Date.now() - t0).toBeLessThan(10_000);
    // Nobody polls: the newest MAX_QUEUED are kept, the rest counted once.
    for (let i = 0; i < MAX_QUEUED + 5; i++) runs.emit(i);
    const full = await subs.events(subscriptionId, 0);
    expect(full.events).toHaveLength(MAX_QUEUED);
    expect(full.events[0]!.step).toBe('s5');
    expect(full.missed).toBe(5);
    expect((await subs.events(subscriptionId, 0)).missed).toBe(0);
    expect(subs.unsubscribe(subscriptionId)).toEqual({ unsubscribed: true });
    expect(runs.handlers.size).toBe(0);
    expect(subs.unsubscribe(subscriptionId)).toEqual({ unsubscribed: false });
    await expect(subs.events(subscriptionId, 0)).rejects.toThrow(ValidationError);
  });

  it('an app that stops polling loses its subscription after the lease', async () => {
    const runs = fakeRuns();
    const subs = new RemoteSubscriptions(runs, 100);
    open.push(subs);
    const { subscriptionId } = subs.subscribe(undefined);
    expect([...runs.handlers.values()]).toEqual([undefined]);
    for (let i = 0; i < 100 && runs.handlers.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(runs.handlers.size).toBe(0);
    await expect(subs.events(subscriptionId, 0)).rejects.toThrow(/^subscriptionId: no subscription '.*' with this serve \(it restarted, or the lease ran out\): subscribe again$/);
  });
});
