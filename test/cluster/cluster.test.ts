// The Restate backend across hosts: Linux network namespaces made (and removed) by this test
// stand for separate machines. Three restate-server nodes (replicated log, replication 2),
// each signing with its own key, in namespaces n1-n3; two engine replicas of one app in r1,
// r2, serving ONE deployment URL through HAProxy (TCP mode, HTTP/2) in the lan namespace.
// Replica r1 talks to node 1, r2 to node 2. Every process is started and stopped by PID.
//
// In `npm test`: one deployment for both replicas; a signal and an event across replicas;
// runs started on both replicas, and parents awaiting children, finish on the other after a
// SIGKILL of r1 mid-run.
// Then a steady load (steps, sleeps, signals, events, the schedule) while a Restate node and
// a replica are SIGKILLed and restarted; TRANQUIL_CLUSTER_LONG=1 makes that load larger.
// Then queues (issue 39): a queue of concurrency 3 holds cluster-wide through both kills.
// Last, faults (issue 44; faults.ts, partition-load.ts), each under load with the triggers
// firing: an app replica cut off from the Restate nodes, and a Restate node cut off from the
// other two, 10 s each in `npm test`; TRANQUIL_CLUSTER_LONG=1 holds the cuts 25 s with more
// load, and adds 5% loss on every host's link with 100 ms ± 20 ms of latency each way (a relay,
// latency-relay.ts: this kernel has no netem) and a replica whose clock runs 45 s ahead (the most
// Restate's signed requests allow: their tokens are valid for 60 s either side of the node's
// clock, so a replica further off rejects every invocation; docs/restate.md).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxOverlap, type Span } from '../conformance/run-queues.ts';
import { canReach, faultNeed, Faults, skewedClockEnv } from './faults.ts';
import { haproxyNeed } from './haproxy.ts';
import { h2RoundTrip, httpRoundTrip, withLatencyPath } from './latency-path.ts';
import { netnsUnavailable, type TestNetwork } from './netns.ts';
import { runScenario } from './partition-load.ts';
import type { Replica } from './replica.ts';
import type { RestateCluster } from './restate-cluster.ts';
import { ENDPOINT_PORT, startTopology, type Topology } from './topology.ts';

const skipReason = netnsUnavailable() ?? haproxyNeed.skipReason;
const LONG = process.env.TRANQUIL_CLUSTER_LONG === '1';

describe.skipIf(skipReason !== undefined)(`Restate cluster across hosts${skipReason ? ` (skipped: ${skipReason})` : ''}`, haproxyNeed.options, () => {
  let net: TestNetwork;
  let cluster: RestateCluster;
  let attempts: string;
  let replicas: Replica[] = [];
  let configs = new Map<Replica, unknown>();
  let topology: Topology | undefined;

  beforeAll(async () => {
    topology = await startTopology('cluster');
    ({ net, cluster, attempts, replicas, configs } = topology);
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  const lines = () => readFileSync(attempts, 'utf8').trim().split('\n').filter(Boolean);
  const ranFor = (key: string) => lines().filter((l) => l.split(' ')[1] === key);
  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('both replicas share one deployment: the load balancer URL, registered once', async () => {
    const r = await fetch(`${cluster.nodes[2]!.adminUrl}/deployments`);
    const all = ((await r.json()) as { deployments: { uri?: string }[] }).deployments;
    const ours = all.filter((d) => d.uri?.startsWith(`http://${net.lanAddress}:${ENDPOINT_PORT}/v/`));
    expect(ours.length).toBe(1);
    expect(all.length).toBe(1);
  });

  it('a signal sent through one replica reaches a run started through the other; one event id starts its run once', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    await r1.call('trigger', { workflow: 'waiter', runId: 'w1' });
    await until('w1 waiting', async () => (await r2.call('status', { runId: 'w1' })) === 'waiting');
    await r2.call('signal', { runId: 'w1', name: 'go', payload: { x: 1 } });
    const w = await r1.call<{ status: string; output: unknown }>('result', { runId: 'w1' });
    expect(w).toMatchObject({ status: 'succeeded', output: { x: 1 } });

    const first = await r1.call<{ runIds: string[]; duplicate: boolean }>('emit', { name: 'order.placed', payload: { o: 7 }, eventId: 'e1' });
    const second = await r2.call<{ runIds: string[] }>('emit', { name: 'order.placed', payload: { o: 7 }, eventId: 'e1' });
    expect(second).toEqual({ runIds: first.runIds, duplicate: true });
    const runId = first.runIds[0]!;
    expect(await r2.call('result', { runId })).toMatchObject({ status: 'succeeded', output: { o: 7 } });
    expect(await r1.call('result', { runId })).toMatchObject({ status: 'succeeded', output: { o: 7 } });
    expect(ranFor(`${runId}/handle`)).toHaveLength(1);
  }, 90_000);

  it('live output across replicas: both replicas read the stream and the published state of a run, whichever executes it, live and from offset 0', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    await r1.call('trigger', { workflow: 'talk', runId: 't1' });
    await until('t1 waiting', async () => (await r2.call('status', { runId: 't1' })) === 'waiting');
    expect(await r1.call('state', { runId: 't1', key: 'phase' })).toBe('waiting');
    expect(await r2.call('state', { runId: 't1', key: 'phase' })).toBe('waiting');
    // Both read while the run waits: the first two chunks now, the third once it is written.
    const live = [r1.call<unknown[]>('stream', { runId: 't1', name: 'out' }), r2.call<unknown[]>('stream', { runId: 't1', name: 'out' })];
    await new Promise((r) => setTimeout(r, 500));
    await r2.call('signal', { runId: 't1', name: 'go', payload: null });
    const all = ['c0', { map: [['n', 1]] }, 'c2'];
    for (const got of await Promise.all(live)) expect(got).toEqual(all);
    expect(await r1.call('result', { runId: 't1' })).toMatchObject({ status: 'succeeded', output: 'ok' });
    // After the end, from an offset, through either replica.
    expect(await r2.call('stream', { runId: 't1', name: 'out', from: 1 })).toEqual(all.slice(1));
    expect(await r1.call('state', { runId: 't1', key: 'phase' })).toBe('done');
    // One replica executed the step; the other read all of it too.
    expect(ranFor('t1/say')).toHaveLength(1);
  }, 120_000);

  it('triggers are cluster-wide: each schedule slot fires once, both replicas see the same ledger and events', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    type Slot = { slot: string; fate: string; runId?: string };
    await until('three fired slots', async () => (await r1.call<Slot[]>('slots')).filter((s) => s.fate === 'fired').length >= 3, 60_000);
    const fired = (await r1.call<Slot[]>('slots')).filter((s) => s.runId);
    expect(new Set(fired.map((s) => s.slot)).size).toBe(fired.length);
    for (const s of fired) {
      expect(await r2.call('result', { runId: s.runId })).toMatchObject({ status: 'succeeded', output: s.slot });
      expect(ranFor(`${s.runId}/beat`), `slot ${s.slot}`).toHaveLength(1);
    }
    // Both replicas read one ledger (newest first; a slot may land between the two reads).
    const [a, b] = [await r1.call<Slot[]>('slots'), await r2.call<Slot[]>('slots')];
    expect(b.slice(b.length - fired.length)).toEqual(a.slice(a.length - fired.length));
    const [ea, eb] = [await r1.call<{ id: string; runIds: string[] }[]>('events'), await r2.call<{ id: string; runIds: string[] }[]>('events')];
    expect(eb).toEqual(ea);
    expect(ea.filter((e) => e.id === 'e1')).toHaveLength(1);
  }, 90_000);

  it('runs started on both replicas finish after one replica is SIGKILLed mid-run; so do parents awaiting children across replicas', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    const ids = Array.from({ length: 6 }, (_, i) => `j${i + 1}`);
    // Two parents (one per replica), each awaiting three children (issue 40): child run ids
    // are `<parent>:<step>`.
    const parents = ['p1', 'p2'];
    const kids = parents.flatMap((p) => [1, 2, 3].map((i) => `${p}:child${i}`));
    // The children wait for a signal: in flight at the kill whatever the machine's speed.
    await Promise.all(parents.map((runId, i) => (i % 2 ? r2 : r1).call('trigger', { workflow: 'parent', runId, input: { k: i + 1 } })));
    await until('every child waiting', async () => (await Promise.all(kids.map((runId) => r2.call('status', { runId })))).every((s) => s === 'waiting'));
    // The nap is long enough that every run is asleep (its step a journaled) at the kill.
    await Promise.all(ids.map((runId, i) => (i % 2 ? r2 : r1).call('trigger', { workflow: 'job', runId, input: { n: i + 1, nap: 4000 } })));
    await until('every run asleep', async () => (await Promise.all(ids.map((runId) => r2.call('status', { runId })))).every((s) => s === 'sleeping'));
    await r1.kill();
    // Through the surviving replica: each child's step b runs there, then its parent's sum.
    for (const runId of kids) await r2.call('signal', { runId, name: 'go', payload: null });
    const parentViews = await Promise.all(parents.map((runId) => r2.call<{ status: string; output: unknown }>('result', { runId })));
    // kid(n) returns b = 2n + 1; parent k's children are n = 10k + 1..3.
    parentViews.forEach((v, i) => expect(v).toMatchObject({ status: 'succeeded', output: [1, 2, 3].map((c) => 2 * (10 * (i + 1) + c) + 1) }));
    // p1's children were started through r1: r2 lists them too (links kept in Restate).
    for (const p of parents) {
      expect(await r2.call('children', { runId: p }), `children of ${p}`).toEqual([1, 2, 3].map((i) => `${p}:child${i}`));
      expect(ranFor(`${p}/sum`), `sum of ${p}`).toHaveLength(1);
    }
    for (const k of kids) {
      expect(ranFor(`${k}/a`), `step a of ${k}`).toHaveLength(1);
      expect(ranFor(`${k}/b`).map((l) => l.split(' ')[2]), `step b of ${k}`).toEqual(['r2']);
    }
    const views = await Promise.all(ids.map((runId) => r2.call<{ status: string; output: unknown; steps: string[] }>('result', { runId })));
    views.forEach((v, i) => expect(v).toMatchObject({ status: 'succeeded', output: { n: i + 1, a: 2 * (i + 1), b: 2 * (i + 1) + 1 } }));
    for (const id of ids) {
      expect(ranFor(`${id}/a`), `step a of ${id}`).toHaveLength(1);
      // r1 was dead before any nap ended: step b ran on r2, once.
      expect(ranFor(`${id}/b`).map((l) => l.split(' ')[2]), `step b of ${id}`).toEqual(['r2']);
    }
    // r1 comes back on the same data dir and serves again.
    await r1.start(configs.get(r1));
    await r1.call('trigger', { workflow: 'job', runId: 'j-after', input: { n: 10, nap: 0 } });
    expect(await r1.call('result', { runId: 'j-after' })).toMatchObject({ status: 'succeeded', output: { n: 10, a: 20, b: 21 } });
  }, 120_000);

  // The issue's "Done when": under a steady load of runs with steps, sleeps, signals, events
  // and the schedule (firing every 2 s), one Restate node and one replica are SIGKILLed and
  // restarted. TRANQUIL_CLUSTER_LONG=1 runs it with more of each.
  it('steady load while a Restate node and a replica are SIGKILLed and restarted: every run finishes once, every slot and event id fires once', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    const node3 = cluster.nodes[2]!;
    const jobs = Array.from({ length: LONG ? 40 : 12 }, (_, i) => `load${i + 1}`);
    const waiters = Array.from({ length: LONG ? 10 : 4 }, (_, i) => `lw${i + 1}`);
    const eventIds = Array.from({ length: LONG ? 10 : 4 }, (_, i) => `le${i + 1}`);
    const at = (f: number) => Math.floor(jobs.length * f);
    let r1Up = true;
    const via = (i: number) => (i % 2 && r1Up ? r1 : r2);
    for (const [i, runId] of waiters.entries()) await via(i).call('trigger', { workflow: 'waiter', runId });
    const emitted: Promise<{ runIds: string[]; duplicate: boolean }>[] = [];
    for (const [i, runId] of jobs.entries()) {
      await via(i).call('trigger', { workflow: 'job', runId, input: { n: i + 1, nap: 1000 + (i % 5) * 500 } });
      if (i === at(0.25)) await cluster.kill(node3);
      if (i === at(0.5)) await r1.kill().then(() => (r1Up = false));
      // While one node and one replica are down: signals and events (each id sent twice,
      // through different replicas when both are up).
      if (i >= at(0.5) && i - at(0.5) < waiters.length) {
        const k = i - at(0.5);
        await r2.call('signal', { runId: waiters[k], name: 'go', payload: { k } });
        emitted.push(r2.call('emit', { name: 'order.placed', payload: { k }, eventId: eventIds[k] }));
      }
      if (i === at(0.6)) cluster.start(node3);
      if (i === at(0.75)) await r1.start(configs.get(r1)).then(() => (r1Up = true));
      await new Promise((r) => setTimeout(r, 100));
    }
    // The second send of each event id, through the restarted replica.
    const first = await Promise.all(emitted);
    const second = await Promise.all(eventIds.map((eventId, k) => r1.call<{ runIds: string[]; duplicate: boolean }>('emit', { name: 'order.placed', payload: { k }, eventId })));
    second.forEach((s, k) => expect(s, `event ${eventIds[k]}`).toEqual({ runIds: first[k]!.runIds, duplicate: true }));

    type View = { status: string; output: unknown; steps: string[] };
    const views = await Promise.all(jobs.map((runId) => r2.call<View>('result', { runId, timeout: '120s' })));
    views.forEach((v, i) => {
      expect(v).toMatchObject({ status: 'succeeded', output: { n: i + 1, a: 2 * (i + 1), b: 2 * (i + 1) + 1 } });
      // Every step result recorded once, in order.
      expect(v.steps, `steps of ${jobs[i]}`).toEqual(['a', 'nap', 'b']);
    });
    for (const id of jobs) {
      // A body killed mid-way may rightly run again (same idempotency key); a journaled one never does.
      expect(ranFor(`${id}/a`).length, `step a of ${id}`).toBeGreaterThanOrEqual(1);
      expect(ranFor(`${id}/b`).length, `step b of ${id}`).toBeGreaterThanOrEqual(1);
    }
    const waited = await Promise.all(waiters.map((runId) => r1.call<View>('result', { runId, timeout: '120s' })));
    waited.forEach((v, k) => {
      expect(v).toMatchObject({ status: 'succeeded', output: { k } });
      expect(new Set(v.steps).size, `steps of ${waiters[k]}`).toBe(v.steps.length);
    });
    // Each event id started its one run, which handled its own payload.
    for (const [k, f] of first.entries()) {
      expect(f.runIds).toHaveLength(1);
      expect(await r1.call<View>('result', { runId: f.runIds[0] })).toMatchObject({ status: 'succeeded', output: { k } });
    }
    // Both replicas list the same events, each id once.
    type Ev = { id: string; runIds: string[] };
    const [ea, eb] = [await r1.call<Ev[]>('events'), await r2.call<Ev[]>('events')];
    expect(eb).toEqual(ea);
    for (const id of eventIds) expect(ea.filter((e) => e.id === id), `event ${id}`).toHaveLength(1);
    // Through both kills, each schedule slot was decided once, and fired slots have one run each.
    const slots = await r1.call<{ slot: string; runId?: string }[]>('slots');
    expect(new Set(slots.map((s) => s.slot)).size).toBe(slots.length);
    const fired = slots.filter((s) => s.runId);
    expect(new Set(fired.map((s) => s.runId)).size).toBe(fired.length);
    for (const s of fired.slice(-5)) expect(await r2.call('result', { runId: s.runId })).toMatchObject({ status: 'succeeded', output: s.slot });
  }, 300_000);

  // Issue 39's "Done when": a queue of concurrency 3 means 3 across the cluster, also while a
  // Restate node and a replica are SIGKILLed. A step-level queue (cq-step: the slot held only
  // while the body runs) and a run-level one (cq-run: each run holds a slot start to end), 40
  // runs each, started through both replicas; every body attempt notes its own start and end
  // (replica-child.ts), and one on the killed replica counts as running until the kill.
  it('queues are cluster-wide: never more than 3 bodies at once while a Restate node and a replica are SIGKILLed; every run finishes, no slot left', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    const node3 = cluster.nodes[2]!;
    const queues = [{ workflow: 'qstep', queue: 'cq-step', runIds: [] as string[] }, { workflow: 'qrun', queue: 'cq-run', runIds: [] as string[] }];
    for (const q of queues) q.runIds = Array.from({ length: 40 }, (_, i) => `${q.workflow}${i + 1}`);
    type Body = { attempt: string; queue: string; runId: string; start: number; end?: number; on: string };
    const bodies = (): Body[] => {
      const byAttempt = new Map<string, Body>();
      for (const l of lines()) {
        const [kind, attempt, queue, runId, t, on] = l.split(' ') as [string, string, string, string, string, string];
        if (kind === 'qstart') byAttempt.set(attempt, { attempt, queue, runId, start: Number(t), on });
        else if (kind === 'qend') byAttempt.get(attempt)!.end = Number(t);
      }
      return [...byAttempt.values()];
    };
    const ended = () => bodies().filter((b) => b.end !== undefined).length;
    // Waits for n ended bodies, or ms (a kill may hold progress up until the restart).
    const atLeast = async (n: number, ms: number) => {
      const deadline = Date.now() + ms;
      while (ended() < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    };
    const started = Date.now();
    await Promise.all(queues.flatMap((q) => q.runIds.map((runId, i) => (i % 2 ? r2 : r1).call('trigger', { workflow: q.workflow, runId, input: { ms: 3000 } }))));
    await atLeast(20, 60_000);
    await cluster.kill(node3);
    const nodeKilledAt = Date.now();
    await atLeast(30, 30_000);
    // r1 dies with a body of its own running (if one comes within 10 s).
    await until('a body running on r1', async () => bodies().some((b) => b.on === 'r1' && b.end === undefined), 10_000).catch(() => {});
    await r1.kill();
    const killedAt = Date.now();
    const cutOnR1 = bodies().filter((b) => b.on === 'r1' && b.end === undefined).length;
    await atLeast(45, 20_000);
    cluster.start(node3);
    await atLeast(55, 20_000);
    await r1.start(configs.get(r1));

    type View = { status: string; output: unknown };
    for (const q of queues) {
      const views = await Promise.all(q.runIds.map((runId, i) => (i % 2 ? r2 : r1).call<View>('result', { runId, timeout: '180s' })));
      views.forEach((v, i) => expect(v, q.runIds[i]).toMatchObject({ status: 'succeeded', output: q.runIds[i] }));
    }
    const took = Date.now() - started;
    const all = bodies();
    console.log(`bodies on r1 cut by its kill: ${cutOnR1}`);
    const rel = (t?: number) => (t === undefined ? '-' : `${t - nodeKilledAt}`);
    const byRun = new Map<string, Body[]>();
    for (const b of all) byRun.set(b.runId, [...(byRun.get(b.runId) ?? []), b]);
    const again = [...byRun].filter(([, bs]) => bs.length > 1).map(([id, bs]) => `${id}: ${bs.map((b) => `${b.on} ${rel(b.start)}..${rel(b.end)}`).join(', ')}`);
    console.log(`node3 killed at 0 ms, r1 at ${killedAt - nodeKilledAt} ms; runs whose body ran again:\n${again.join('\n')}`);
    // A body with no end is one the kill cut short: on r1, started before the kill.
    expect(all.filter((b) => b.end === undefined && !(b.on === 'r1' && b.start < killedAt))).toEqual([]);
    for (const q of queues) {
      const mine = all.filter((b) => b.queue === q.queue);
      const spans: Span[] = mine.map((b) => ({ key: b.runId, start: b.start, end: b.end ?? killedAt }));
      const most = maxOverlap(spans);
      console.log(`${q.queue}: ${q.runIds.length} runs, ${mine.length} body attempts (${mine.filter((b) => b.end === undefined).length} cut by the kill of r1), at most ${most} at once, ${took} ms`);
      // The limit bound (40 runs in line) and was never passed.
      expect(most, `bodies of ${q.queue} at once`).toBe(3);
      // Every run's body ended once at least (a body cut by the kill ran again).
      for (const runId of q.runIds) expect(mine.some((b) => b.runId === runId && b.end !== undefined), `a finished body of ${runId}`).toBe(true);
      // No slot left held, no waiter left (what `tranquil queues describe` reads, through both replicas).
      for (const r of [r1, r2]) {
        await until(`${q.queue} empty through ${r.name}`, async () => (await r.call<{ running: number; waiting: number }[]>('queue', { name: q.queue })).every((row) => row.running === 0 && row.waiting === 0), 20_000);
      }
    }
  }, 420_000);

  // Issue 44: faults under load (partition-load.ts says what is asserted after each). The
  // bound: every run finishes within 2 minutes of the heal, generous on a busy 2-core machine
  // (a cut of 25 s lets TCP's retransmit timer grow to about as much again after the heal).
  const faults = new Faults();
  // Restate's connections to the deployment are spread over both replicas again first (after
  // the kills above they all lead to r2), so the faulted replica has invocations in flight.
  // Restarted until six probe runs put bodies on both (or five tries fail the test).
  let probes = 0;
  const rebalance = async () => {
    for (let i = 0; i < 5; i++) {
      await topology!.lb.restart();
      await new Promise((r) => setTimeout(r, 1500));
      const ids = Array.from({ length: 6 }, () => `probe${++probes}`);
      await Promise.all(ids.map((runId, k) => replicas[k % 2]!.call('trigger', { workflow: 'job', runId, input: { n: 1, nap: 0 } })));
      await Promise.all(ids.map((runId) => replicas[1]!.call('result', { runId })));
      const on = new Set(ids.flatMap((id) => ranFor(`${id}/a`).map((l) => l.split(' ')[2])));
      if (on.has('r1') && on.has('r2')) return;
    }
    throw new Error('after 5 restarts of the balancer Restate still sent no invocation to one replica');
  };
  const BOUND_MS = 120_000;
  const HOLD_MS = LONG ? 25_000 : 10_000;
  const load = LONG ? { jobs: 30, waiters: 6, events: 6 } : { jobs: 9, waiters: 2, events: 2 };
  const faultSkip = faultNeed.skipReason;
  const faultTest = (name: string, fn: () => Promise<void>, only: 'always' | 'long', setupMs = 0) =>
    it.skipIf(faultSkip !== undefined || (only === 'long' && !LONG))(
      `${name}${faultSkip ? ` [skipped: ${faultSkip}]` : only === 'long' && !LONG ? ' [skipped: runs with TRANQUIL_CLUSTER_LONG=1]' : ''}`,
      { ...faultNeed.options, timeout: HOLD_MS + BOUND_MS + 120_000 + setupMs },
      async () => {
        try {
          await fn();
        } finally {
          faults.healAll();
        }
      },
    );

  faultTest('an app replica cut off from every Restate node (and the load balancer) under load, then healed: nothing lost or doubled', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    const peers = [...cluster.nodes.map((n) => n.address), net.lanAddress];
    const reachesNode1 = () => canReach(r1.ns, cluster.nodes[0]!.address, 8080);
    await runScenario([r1, r2], attempts, {
      tag: 'cut-r1', ...load, holdMs: HOLD_MS, boundMs: BOUND_MS, during: [r2], reruns: 0,
      // The cut must meet invocations in flight on r1: the balancer is rebalanced right before
      // it until probe runs land on both replicas (Restate keeps few HTTP/2 connections, and
      // the scenario's own nine jobs all went to r2 once when rebalanced earlier). Bodies it
      // interrupts began before the heal, so they may run again (reruns: 0).
      apply: async () => (await rebalance(), faults.cut(r1.ns, peers), expect(reachesNode1(), 'r1 reaches node 1 through the cut').toBe(false)),
      heal: () => (faults.heal(r1.ns), expect(reachesNode1(), 'r1 reaches node 1 after the heal').toBe(true)),
    });
  }, 'always');

  faultTest('a Restate node cut off from the other two under load, then healed: nothing lost or doubled', async () => {
    const [n1, n2, n3] = cluster.nodes as [typeof cluster.nodes[0], typeof cluster.nodes[0], typeof cluster.nodes[0]];
    const reachesNode1 = () => canReach(n3.ns, n1.address, 5122);
    await runScenario(replicas as [Replica, Replica], attempts, {
      tag: 'cut-n3', ...load, holdMs: HOLD_MS, boundMs: BOUND_MS, during: replicas, reruns: 15_000,
      apply: () => (faults.cut(n3.ns, [n1.address, n2.address]), expect(reachesNode1(), 'node 3 reaches node 1 through the cut').toBe(false)),
      heal: () => (faults.heal(n3.ns), expect(reachesNode1(), 'node 3 reaches node 1 after the heal').toBe(true)),
    });
  }, 'always');

  // Latency without netem: a relay (latency-relay.ts, latency-path.ts) on the balancer's
  // links to the replicas and on each replica's calls to its node's ingress and admin holds
  // each direction's bytes 100 ms ± 20 ms while the fault is held; nftables drops 5% each way
  // on every host's link (netem, where the kernel has it, adds its own delay on top, also
  // between the Restate nodes). The round trips measured through the relays during the hold
  // show the delay is real: at least twice the smallest one-way delay.
  faultTest('latency (100 ms ± 20 ms each way through a relay) and 5% loss on every host link under load: nothing lost or doubled', async () => {
    const hosts = [...replicas.map((r) => r.ns), ...cluster.nodes.map((n) => n.ns)];
    const applied: string[] = [];
    const delay = { delayMs: 100, jitterMs: 20 };
    await withLatencyPath(topology!, async (relay) => {
      await rebalance();
      const lbToR1 = relay.addresses.get('lb-r1')!;
      // Three of each, one at a time: to r1's endpoint (as the balancer reaches it) and to node 1's admin (as r1 does).
      const probe = async () => {
        const out = { endpoint: [] as number[], admin: [] as number[] };
        for (let i = 0; i < 3; i++) {
          out.endpoint.push(await h2RoundTrip(lbToR1.host, lbToR1.port));
          out.admin.push(await httpRoundTrip(relay.url('admin-n1')));
        }
        return out;
      };
      const before = await probe();
      let during = before;
      // Healed before the replicas are restarted on their own config (withLatencyPath's finally).
      try {
        await runScenario(replicas as [Replica, Replica], attempts, {
          tag: 'lossy', ...load, holdMs: 30_000, boundMs: BOUND_MS, during: replicas, reruns: 0,
          apply: async () => {
            hosts.forEach((ns) => applied.push(faults.degrade(ns, { lossPct: 5, delayMs: 100, jitterMs: 20, rateKbit: 4000 })));
            await relay.set(delay);
            during = await probe();
          },
          heal: async () => {
            hosts.forEach((ns) => faults.restore(ns));
            await relay.set({ delayMs: 0, jitterMs: 0 });
          },
        });
      } finally {
        faults.healAll();
      }
      const ms = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');
      console.log(`lossy links: ${applied[0]}; relay ${delay.delayMs} ms ± ${delay.jitterMs} ms each way; round trips (ms) before / during the hold: r1's endpoint ${ms(before.endpoint)} / ${ms(during.endpoint)}, node 1's admin ${ms(before.admin)} / ${ms(during.admin)}`);
      for (const x of [...during.endpoint, ...during.admin]) expect(x, 'a round trip through the relay during the hold').toBeGreaterThanOrEqual(2 * (delay.delayMs - delay.jitterMs));
    });
    // Setup: each replica restarted twice, the balancer three times.
  }, 'long', 90_000);

  faultTest('a replica whose wall clock runs 45 s ahead of the others (libfaketime) under load: nothing lost or doubled', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    await r1.kill();
    try {
      await r1.start(configs.get(r1), skewedClockEnv(45));
      await rebalance();
      // What a skew does that is not asserted here (docs/restate.md says it): a timer armed
      // on r1 wakes ~45 s late (the SDK dates a sleep by its host's clock; the log's "more
      // than its nap" shows it), and r1's schedule ticks record the slots up to its clock as
      // missed, so most 2-second slots in the window are missed, each still decided once.
      await runScenario([r1, r2], attempts, { tag: 'skew', ...load, holdMs: HOLD_MS, boundMs: BOUND_MS, during: replicas, busy: 'r1', apply: () => {}, heal: () => {} });
    } finally {
      await r1.kill();
      await r1.start(configs.get(r1));
    }
  }, 'long');
});
