// A queue kept as stored data (src/domain/queue-snapshot.ts, the Restate queue object's
// state): every call rebuilds the limiter from it, through a JSON round trip as Restate
// stores it, and must decide as one long-lived QueueState does.
import { describe, expect, it } from 'vitest';
import { emptySnapshot, grantDue, isIdle, joinLine, leaveLine, markStarted, waitIn, type QueueSnapshot } from '../../src/domain/queue-snapshot.ts';

/** As the object's state is stored and read back. */
const stored = (s: QueueSnapshot): QueueSnapshot => JSON.parse(JSON.stringify(s)) as QueueSnapshot;
const ask = (id: string, key = '') => ({ id, runId: `run-${id}`, step: 'call', key });

describe('queue snapshot', () => {
  it('grants up to the concurrency, the next on a release; an ask joins once', () => {
    let s = emptySnapshot({ concurrency: 2 });
    for (const id of ['a', 'b', 'c']) joinLine(s, ask(id), 0);
    expect(joinLine(s, ask('a'), 0)).toBe(false);
    expect(grantDue(s, 0).granted.map((g) => g.id)).toEqual(['a', 'b']);
    s = stored(s);
    expect(grantDue(s, 1).granted).toEqual([]);
    expect(leaveLine(s, 'a', 0)).toBe(true);
    expect(leaveLine(s, 'a', 0)).toBe(false);
    expect(grantDue(s, 2).granted.map((g) => g.id)).toEqual(['c']);
  });

  it('keeps the keys turns across stored rebuilds: a cold key goes before a hot key with many waiting', () => {
    let s = emptySnapshot({ concurrency: 1 });
    for (let i = 0; i < 50; i++) joinLine(s, ask(`h${i}`, 'hot'), i);
    expect(grantDue(s, 0).granted.map((g) => g.id)).toEqual(['h0']);
    s = stored(s);
    joinLine(s, ask('cold', 'cold'), 100);
    s = stored(s);
    leaveLine(s, 'h0', 0);
    expect(grantDue(s, 101).granted.map((g) => g.id)).toEqual(['cold']);
    s = stored(s);
    leaveLine(s, 'cold', 0);
    expect(grantDue(s, 102).granted.map((g) => g.id)).toEqual(['h1']);
  });

  it('counts starts in a sliding window across rebuilds and says when the next is due', () => {
    let s = emptySnapshot({ rate: { limit: 2, periodMs: 1000 } });
    for (const id of ['a', 'b', 'c']) joinLine(s, ask(id), 0);
    const first = grantDue(s, 0);
    expect(first.granted.map((g) => g.id)).toEqual(['a', 'b']);
    // Pending until their bodies begin: no time is due yet.
    expect(first.later).toBeUndefined();
    s = stored(s);
    expect(markStarted(s, 'a', 0)).toBe(true);
    expect(markStarted(s, 'a', 0)).toBe(false);
    markStarted(s, 'b', 0);
    expect(grantDue(s, 0).later).toBe(1000);
    leaveLine(s, 'a', 10);
    leaveLine(s, 'b', 10);
    expect(grantDue(s, 999)).toEqual({ granted: [], later: 1000 });
    expect(grantDue(stored(s), 1000).granted.map((g) => g.id)).toEqual(['c']);
  });

  it('says where a waiter stands and when the state is idle', () => {
    const s = emptySnapshot({ concurrency: 3, key: { concurrency: 1 } });
    for (const id of ['a', 'b', 'c']) joinLine(s, ask(id, 'u7'), 0);
    grantDue(s, 0);
    expect(waitIn('llm', stored(s), 'run-c')).toEqual({ queue: 'llm', key: 'u7', step: 'call', ahead: 1, running: 1, limit: 1 });
    expect(waitIn('llm', s, 'run-a')).toBeUndefined(); // holding, not waiting
    for (const id of ['a', 'b', 'c']) leaveLine(s, id, 0);
    expect(isIdle(s, 1)).toBe(true);
  });

  // A grant resolved while its run's invocation could not run (its replica died; Restate
  // retries it after a backoff while another replica serves the object) starts its
  // body only when the run runs again. Counted at the grant, that late body started beside
  // the next window's grants: 2 bodies at one instant with a limit of 1 per second.
  it('counts a rate-limited start from when its body begins: a late body holds the window', () => {
    let s = emptySnapshot({ concurrency: 5, rate: { limit: 1, periodMs: 1000 } });
    for (const id of ['a', 'b']) joinLine(s, ask(id), 0);
    expect(grantDue(s, 0).granted.map((g) => g.id)).toEqual(['a']);
    s = stored(s);
    // a's run comes back only at 5000: b is not granted meanwhile.
    expect(grantDue(s, 5000).granted).toEqual([]);
    markStarted(s, 'a', 5000);
    s = stored(s);
    expect(grantDue(s, 5999)).toEqual({ granted: [], later: 6000 });
    expect(grantDue(s, 6000).granted.map((g) => g.id)).toEqual(['b']);
  });

  it('a pending holder that leaves counts as a start when it leaves', () => {
    const s = emptySnapshot({ concurrency: 5, key: { rate: { limit: 1, periodMs: 1000 } } });
    for (const id of ['a', 'b']) joinLine(s, ask(id, 'u1'), 0);
    expect(grantDue(s, 0).granted.map((g) => g.id)).toEqual(['a']);
    leaveLine(s, 'a', 300);
    expect(grantDue(s, 300)).toEqual({ granted: [], later: 1300 });
    expect(isIdle(s, 1300)).toBe(false); // b still waits
  });
});
