// One fault scenario of the cluster test (cluster.test.ts, issue 44): a steady load (jobs with
// a step, a sleep and a step; waiters woken by signals; events, each id sent twice through
// different replicas; the 2-second schedule always firing) runs while a fault is applied,
// held, then healed. Then: every run finished once, after the heal within `boundMs`; every
// step body ran once, or again only if its first attempt began before the heal (or within
// the scenario's window after it: a body cut off mid-way rightly runs again under the same
// idempotency key); each event id started one
// run; each schedule slot in the window was decided once and none was left out.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { Replica } from './replica.ts';

export interface Scenario {
  tag: string;
  jobs: number;
  waiters: number;
  events: number;
  /** How long the fault is held. */
  holdMs: number;
  /** Every run finishes within this long after the heal. */
  boundMs: number;
  apply(): void | Promise<void>;
  heal(): void | Promise<void>;
  /** The replicas that can still reach the cluster while the fault holds. */
  during: Replica[];
  /** A body may run again (at most 3 times in all) only if its first attempt began before
   *  the heal plus this long (the fault's reach past the heal: a node that was cut off learns
   *  only after it that another leads its partitions, and aborts the attempts it ran);
   *  undefined: no body runs twice. */
  reruns?: number;
  /** A replica that must have run some of the scenario's bodies (the fault touched it). */
  busy?: string;
}

export interface Outcome {
  healedAfterMs: number;
  finishedAfterHealMs: number;
  reran: string[];
  slots: number;
  overNapMs: number;
}

type View = { status: string; output: unknown; steps: string[] };
type Slot = { slot: string; fate: string; runId?: string; count?: number; until?: string };
type Attempt = { key: string; on: string; t: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runScenario(replicas: [Replica, Replica], attemptsFile: string, s: Scenario): Promise<Outcome> {
  const [r1, r2] = replicas;
  const id = (what: string, i: number) => `${s.tag}-${what}${i + 1}`;
  const jobs = Array.from({ length: s.jobs }, (_, i) => id('job', i));
  const waiters = Array.from({ length: s.waiters }, (_, i) => id('w', i));
  const eventIds = Array.from({ length: s.events }, (_, i) => id('e', i));
  const began = Date.now();

  // Before the fault: waiters and the first third of the jobs, through both replicas.
  for (const [i, runId] of waiters.entries()) await replicas[i % 2]!.call('trigger', { workflow: 'waiter', runId });
  const third = Math.ceil(jobs.length / 3);
  const naps = jobs.map((_, i) => 1000 + (i % 5) * 500);
  const startedAt: number[] = [];
  const startJob = (via: Replica, i: number) => ((startedAt[i] = Date.now()), via.call('trigger', { workflow: 'job', runId: jobs[i], input: { n: i + 1, nap: naps[i] } }));
  for (let i = 0; i < third; i++) await startJob(replicas[i % 2]!, i);

  await s.apply();
  const faultAt = Date.now();
  // While it holds: the second third of the jobs, every signal and the first send of every
  // event id, spread over the hold, through the replicas that can still reach the cluster.
  const firstSends: Promise<{ runIds: string[]; duplicate: boolean }>[] = [];
  const spread = s.holdMs / (third + waiters.length + 1);
  const on = (i: number) => s.during[i % s.during.length]!;
  for (let i = third; i < 2 * third && i < jobs.length; i++) {
    await startJob(on(i), i);
    await sleep(spread);
  }
  for (const [k, runId] of waiters.entries()) {
    await on(k).call('signal', { runId, name: 'go', payload: { k } });
    await sleep(spread);
  }
  for (let k = 0; k < eventIds.length; k++) firstSends.push(on(k).call('emit', { name: 'order.placed', payload: { k }, eventId: eventIds[k] }));
  const left = faultAt + s.holdMs - Date.now();
  if (left > 0) await sleep(left);
  await s.heal();
  const healedAt = Date.now();

  // After the heal: the last third, and the second send of each event id through the other replica.
  for (let i = 2 * third; i < jobs.length; i++) await startJob(replicas[i % 2]!, i);
  const first = await Promise.all(firstSends);
  const second = await Promise.all(eventIds.map((eventId, k) => replicas[(k + 1) % 2]!.call<{ runIds: string[]; duplicate: boolean }>('emit', { name: 'order.placed', payload: { k }, eventId })));
  second.forEach((x, k) => expect(x, `event ${eventIds[k]} sent again`).toEqual({ runIds: first[k]!.runIds, duplicate: true }));

  const timeout = `${Math.ceil(s.boundMs / 1000)}s`;
  const endedAt: number[] = [];
  const views = await Promise.all(jobs.map((runId, i) => replicas[i % 2]!.call<View>('result', { runId, timeout }).then((v) => ((endedAt[i] = Date.now()), v))));
  // How much longer than its nap the slowest job took, start to end as this process saw it.
  const overNap = Math.max(...jobs.map((_, i) => endedAt[i]! - startedAt[i]! - naps[i]!));
  const waited = await Promise.all(waiters.map((runId) => r2.call<View>('result', { runId, timeout })));
  const handled = await Promise.all(first.map((f) => r1.call<View>('result', { runId: f.runIds[0], timeout })));
  const finishedAt = Date.now();

  views.forEach((v, i) => {
    expect(v, jobs[i]).toMatchObject({ status: 'succeeded', output: { n: i + 1, a: 2 * (i + 1), b: 2 * (i + 1) + 1 } });
    expect(v.steps, `steps of ${jobs[i]}`).toEqual(['a', 'nap', 'b']);
  });
  waited.forEach((v, k) => {
    expect(v, waiters[k]).toMatchObject({ status: 'succeeded', output: { k } });
    expect(new Set(v.steps).size, `steps of ${waiters[k]}`).toBe(v.steps.length);
  });
  first.forEach((f, k) => {
    expect(f.runIds, `runs of event ${eventIds[k]}`).toHaveLength(1);
    expect(handled[k], `the run of event ${eventIds[k]}`).toMatchObject({ status: 'succeeded', output: { k } });
  });

  // The schedule: every slot decided once; no gap from the scenario's start to its end; each
  // fired slot's run finished with its slot.
  const ledger = await r2.call<Slot[]>('slots');
  expect(new Set(ledger.map((x) => x.slot)).size, 'slots decided once').toBe(ledger.length);
  const fired = ledger.filter((x) => x.runId);
  expect(new Set(fired.map((x) => x.runId)).size, 'one run per fired slot').toBe(fired.length);
  const win = ledger.filter((x) => Date.parse(x.slot) >= began && Date.parse(x.slot) <= finishedAt - 10_000);
  const covered = new Set<number>();
  for (const x of ledger) {
    const from = Date.parse(x.slot);
    const to = x.until ? Date.parse(x.until) : from;
    for (let t = from; t <= to; t += 2000) covered.add(t);
  }
  const firstSlot = Math.ceil(began / 2000) * 2000;
  const gaps: string[] = [];
  for (let t = firstSlot; t <= finishedAt - 10_000; t += 2000) if (!covered.has(t)) gaps.push(new Date(t).toISOString());
  expect(gaps, 'slots never decided').toEqual([]);
  const firedInWindow = win.filter((x) => x.runId);
  for (const x of firedInWindow) expect(await r2.call<View>('result', { runId: x.runId, timeout }), `slot ${x.slot}`).toMatchObject({ status: 'succeeded', output: x.slot });

  // Step bodies: once each, or again only when an attempt started before the heal (the keys
  // are the scenario's own, but a slot's run may come before the scenario: the whole file).
  const attempts = readFileSync(attemptsFile, 'utf8').trim().split('\n').filter(Boolean).map((l): Attempt => {
    const [, key, on, t] = l.split(' ') as [string, string, string, string];
    return { key: key!, on: on!, t: Number(t) };
  });
  const byKey = new Map<string, Attempt[]>();
  for (const a of attempts) byKey.set(a.key, [...(byKey.get(a.key) ?? []), a]);
  const keys = [
    ...jobs.flatMap((j) => [`${j}/a`, `${j}/b`]),
    ...waiters.map((w) => `${w}/after`),
    ...first.map((f) => `${f.runIds[0]}/handle`),
    ...firedInWindow.map((x) => `${x.runId}/beat`),
  ];
  const reran: string[] = [];
  for (const key of keys) {
    const got = byKey.get(key) ?? [];
    expect(got.length, `body ${key} ran`).toBeGreaterThanOrEqual(1);
    if (got.length === 1) continue;
    reran.push(`${key}: ${got.map((a) => `${a.on}@${a.t - faultAt}`).join(', ')}`);
    if (s.reruns === undefined) continue;
    // Cut off mid-way (times are the replicas' own clocks, which agree here: no scenario with
    // reruns skews a clock).
    expect(got.length, `body ${key} ran`).toBeLessThanOrEqual(3);
    expect(Math.min(...got.map((a) => a.t)) - healedAt, `body ${key} ran ${got.length} times; the first began this long after the heal`).toBeLessThan(s.reruns);
  }
  if (s.reruns === undefined) expect(reran, 'bodies that ran more than once').toEqual([]);
  const perReplica = new Map<string, number>();
  for (const key of keys) for (const a of byKey.get(key) ?? []) perReplica.set(a.on, (perReplica.get(a.on) ?? 0) + 1);
  const spreadOf = [...perReplica].map(([r, n]) => `${r} ${n}`).join(', ');
  if (s.busy) expect(perReplica.get(s.busy) ?? 0, `bodies run on ${s.busy} (${spreadOf})`).toBeGreaterThan(0);
  const outcome = { healedAfterMs: healedAt - faultAt, finishedAfterHealMs: finishedAt - healedAt, reran, slots: win.length, overNapMs: overNap };
  console.log(`${s.tag}: fault held ${outcome.healedAfterMs} ms; every run finished ${outcome.finishedAfterHealMs} ms after the heal (bound ${s.boundMs}); the slowest job took ${overNap} ms more than its nap; ${win.length} slots in the window, ${firedInWindow.length} fired; bodies per replica: ${spreadOf}; bodies run again:\n  ${reran.join('\n  ') || 'none'}`);
  expect(outcome.finishedAfterHealMs, 'every run finished within the bound after the heal').toBeLessThanOrEqual(s.boundMs);
  return outcome;
}
