// Conformance scenarios for debounce of event and webhook triggers (issue 39,
// docs/flow-control.md, Debounce): a burst of events (or deliveries) with one key becomes one
// run with the last input; a redelivered event id or Idempotency-Key changes nothing.
// Assertions come from what the bodies saw (their input, their own start time).
import { expect } from 'vitest';
import { event, webhook, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen {
  user: string;
  n: number;
  at: number;
}

/** A workflow debounced per `input.user`, triggered by `trigger`, recording what it ran with. */
function debounced(name: string, seen: Seen[], debounce: { period: string | number; maxWait?: string | number }, trigger: ReturnType<typeof event> | ReturnType<typeof webhook> = event('db.edit')) {
  return workflow(name, { debounce: { ...debounce, key: (input: { user: string }) => input.user } }, (w) => {
    w.trigger(trigger);
    w.run(async ({ input, step }) => {
      const at = await step.do('begin', () => Date.now());
      seen.push({ user: input.user, n: input.n, at });
      return { user: input.user, n: input.n };
    });
  });
}

/** The workflow's runs once `count` of them have ended, first created first. */
async function endedRuns(engine: Engine, workflow: string, count: number, until: ScenarioKit['until']) {
  await until(`${count} runs of ${workflow} ended`, async () => (await engine.runs.list({ workflow })).filter((r) => r.status === 'succeeded').length >= count, 30_000);
  const runs = await engine.runs.list({ workflow });
  return [...runs].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export function debounceTriggerScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('debounce (events): a burst of 50 events with one key becomes one run with the last payload', async () => {
    const seen: Seen[] = [];
    const { engine } = await boot([debounced('dbe-burst', seen, { period: '1500ms' })]);
    let lastAt = 0;
    for (let n = 0; n < 50; n++) {
      // The event names no run: its burst's run starts later.
      expect(await engine.emit('db.edit', { user: 'u1', n }, { id: `edit-${n}` })).toEqual({ runIds: [], duplicate: false });
      lastAt = Date.now();
    }
    const [run] = await endedRuns(engine, 'dbe-burst', 1, until);
    expect(run!.output).toEqual({ user: 'u1', n: 49 });
    expect(seen).toEqual([expect.objectContaining({ user: 'u1', n: 49 })]);
    expect(seen[0]!.at).toBeGreaterThanOrEqual(lastAt + 1500 - 20);
    await sleep(500);
    expect(await engine.runs.list({ workflow: 'dbe-burst' })).toHaveLength(1);
  }, 60_000);

  test('debounce (events): two keys become two runs, each with its own last payload', async () => {
    const seen: Seen[] = [];
    const { engine } = await boot([debounced('dbe-keys', seen, { period: '800ms' })]);
    for (let n = 0; n < 20; n++) await engine.emit('db.edit', { user: n % 2 === 0 ? 'a' : 'b', n }, { id: `k-${n}` });
    const runs = await endedRuns(engine, 'dbe-keys', 2, until);
    expect(runs.map((r) => r.output).sort((x, y) => ((x as unknown as Seen).n - (y as unknown as Seen).n))).toEqual([{ user: 'a', n: 18 }, { user: 'b', n: 19 }]);
    await sleep(300);
    expect(seen).toHaveLength(2);
  }, 60_000);

  test('debounce (events): a redelivered event id neither replaces the burst input nor starts another run', async () => {
    const seen: Seen[] = [];
    const { engine } = await boot([debounced('dbe-redeliver', seen, { period: '800ms' })]);
    await engine.emit('db.edit', { user: 'u1', n: 0 }, { id: 'ev-0' });
    await engine.emit('db.edit', { user: 'u1', n: 1 }, { id: 'ev-1' });
    // Redelivered while the burst collects: a duplicate, its (other) payload unused.
    expect(await engine.emit('db.edit', { user: 'u1', n: 7 }, { id: 'ev-0' })).toEqual({ runIds: [], duplicate: true });
    const [run] = await endedRuns(engine, 'dbe-redeliver', 1, until);
    expect(run!.output).toEqual({ user: 'u1', n: 1 });
    // Redelivered after the burst's run started: no new burst.
    expect((await engine.emit('db.edit', { user: 'u1', n: 8 }, { id: 'ev-1' })).duplicate).toBe(true);
    await sleep(1500);
    expect(await engine.runs.list({ workflow: 'dbe-redeliver' })).toHaveLength(1);
    expect(seen.map((s) => s.n)).toEqual([1]);
  }, 60_000);

  test('debounce (webhooks): deliveries with one key become one run; a redelivered Idempotency-Key changes nothing', async () => {
    const seen: Seen[] = [];
    const { engine } = await boot([debounced('dbw-hook', seen, { period: '800ms' }, webhook({ path: 'dbw' }))]);
    const url = await engine.webhookUrl('dbw-hook');
    const deliver = async (n: number, key: string) => {
      const r = await fetch(url, { method: 'POST', body: JSON.stringify({ user: 'u1', n }), headers: { 'content-type': 'application/json', 'idempotency-key': key } });
      expect(r.status).toBe(202);
      return (await r.json()) as { runId: string; created: boolean };
    };
    const first = await deliver(0, 'd-0');
    expect(first.created).toBe(true);
    expect(await deliver(1, 'd-1')).toEqual({ runId: first.runId, created: false });
    expect(await deliver(9, 'd-0')).toEqual({ runId: first.runId, created: false });
    const view = await engine.result(first.runId, { timeout: '30s' });
    expect(view.output).toEqual({ user: 'u1', n: 1 });
    // After the run: the same delivery again answers with its burst and starts nothing.
    expect(await deliver(1, 'd-1')).toEqual({ runId: first.runId, created: false });
    await sleep(1500);
    expect(await engine.runs.list({ workflow: 'dbw-hook' })).toHaveLength(1);
    // A key function that returns no string is a 400, nothing stored.
    const bad = await fetch(url, { method: 'POST', body: JSON.stringify({ user: 7, n: 0 }), headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe("workflow 'dbw-hook' debounce.key: the key function returned number, not a string");
  }, 60_000);

  test('debounce (events): maxWait bounds a burst of events that never goes quiet', async () => {
    const seen: Seen[] = [];
    const { engine } = await boot([debounced('dbe-maxwait', seen, { period: '1s', maxWait: '1s' })]);
    const streamStart = Date.now();
    let n = 0;
    while (Date.now() < streamStart + 3000) {
      await engine.emit('db.edit', { user: 'u1', n }, { id: `mw-${n++}` });
      await sleep(40);
    }
    const lastEmit = Date.now();
    const runs = await endedRuns(engine, 'dbe-maxwait', 2, until);
    await until('the stream\'s last burst ran', async () => (await engine.runs.list({ workflow: 'dbe-maxwait' })).some((r) => (r.output as unknown as Seen | undefined)?.n === n - 1), 30_000);
    // The first run started while events still came: maxWait, not quiet, started it, no
    // earlier than maxWait after the stream's first event.
    const first = seen.find((s) => s.n === (runs[0]!.output as unknown as Seen).n)!;
    expect(first.at).toBeLessThan(lastEmit);
    expect(first.at).toBeGreaterThanOrEqual(streamStart + 1000 - 20);
    // Each run has a later payload than the one before (each its burst's last).
    const ns = (await endedRuns(engine, 'dbe-maxwait', 2, until)).map((r) => (r.output as unknown as Seen).n);
    expect([...ns].sort((a, b) => a - b)).toEqual(ns);
    expect(new Set(ns).size).toBe(ns.length);
  }, 60_000);

  test('debounce (events): a burst of events survives an engine restart and runs once with its last payload', async () => {
    const seen: Seen[] = [];
    const wf = debounced('dbe-restart', seen, { period: '5s' });
    const { engine, dir } = await boot([wf]);
    for (let n = 0; n < 3; n++) await engine.emit('db.edit', { user: 'u1', n }, { id: `r-${n}` });
    const second = await restart(engine, [wf], dir);
    expect(seen).toHaveLength(0);
    // A redelivery across the restart is still a duplicate; a new event joins the burst.
    expect((await second.emit('db.edit', { user: 'u1', n: 9 }, { id: 'r-2' })).duplicate).toBe(true);
    await second.emit('db.edit', { user: 'u1', n: 3 }, { id: 'r-3' });
    const [run] = await endedRuns(second, 'dbe-restart', 1, until);
    expect(run!.output).toEqual({ user: 'u1', n: 3 });
    await sleep(500);
    expect(await second.runs.list({ workflow: 'dbe-restart' })).toHaveLength(1);
    expect(seen.map((s) => s.n)).toEqual([3]);
  }, 90_000);
}
