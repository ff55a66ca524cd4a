// The Restate backend across hosts: Linux network namespaces made (and removed) by this test
// stand for separate machines. Three restate-server nodes (replicated log, replication 2),
// each signing with its own key, in namespaces n1-n3; two engine replicas of one app in r1,
// r2, serving ONE deployment URL through HAProxy (TCP mode, HTTP/2) in the lan namespace.
// Replica r1 talks to node 1, r2 to node 2. Every process is started and stopped by PID.
//
// In `npm test`: one deployment for both replicas; a signal and an event across replicas;
// runs started on both replicas finish on the other after a SIGKILL of r1 mid-run.
// TRANQUIL_CLUSTER_LONG=1 adds a steady load while a Restate node and a replica are killed
// and restarted.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Haproxy, haproxyUnavailable } from './haproxy.ts';
import { netnsUnavailable, TestNetwork } from './netns.ts';
import { Replica } from './replica.ts';
import { RestateCluster } from './restate-cluster.ts';

const skipReason = netnsUnavailable() ?? haproxyUnavailable();
const LONG = process.env.TRANQUIL_CLUSTER_LONG === '1';
const ENDPOINT_PORT = 9080;

describe.skipIf(skipReason !== undefined)(`Restate cluster across hosts${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let net: TestNetwork;
  let dir: string;
  let cluster: RestateCluster;
  let lb: Haproxy;
  let attempts: string;
  const replicas: Replica[] = [];
  const configs = new Map<Replica, unknown>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tranquil-cluster-'));
    attempts = join(dir, 'attempts.log');
    writeFileSync(attempts, '');
    net = new TestNetwork();
    net.create();
    cluster = new RestateCluster(net, dir);
    const hosts = [net.addHost('r1', 21), net.addHost('r2', 22)];
    lb = new Haproxy(net, net.lan, dir, `${net.lanAddress}:${ENDPOINT_PORT}`, hosts.map((h, i) => ({ name: `r${i + 1}`, address: `${h.address}:${ENDPOINT_PORT}` })));
    cluster.startAll();
    lb.start();
    hosts.forEach((h, i) => {
      const node = cluster.nodes[i]!;
      const r = new Replica(net, `r${i + 1}`, h.ns, { ATTEMPTS: attempts });
      configs.set(r, {
        dataDir: join(dir, `replica${i + 1}`),
        restate: {
          ingressUrl: node.ingressUrl, adminUrl: node.adminUrl, identityKeys: cluster.publicKeys,
          endpoint: { host: h.address, port: ENDPOINT_PORT, url: `http://${net.lanAddress}:${ENDPOINT_PORT}/` },
          triggers: 'restate',
        },
      });
      replicas.push(r);
    });
    // Both at once, while the nodes boot (the engine rides out an admin API that is not up
    // yet): registration must come out as one deployment whoever is first.
    await Promise.all([...cluster.nodes.map((n) => cluster.waitAdmin(n)), ...replicas.map((r) => r.start(configs.get(r)))]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.kill().catch(() => {})));
    await lb?.stop().catch(() => {});
    await cluster?.stopAll().catch(() => {});
    net?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
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

  it('runs started on both replicas finish after one replica is SIGKILLed mid-run', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    const ids = Array.from({ length: 6 }, (_, i) => `j${i + 1}`);
    // The nap is long enough that every run is asleep (its step a journaled) at the kill.
    await Promise.all(ids.map((runId, i) => (i % 2 ? r2 : r1).call('trigger', { workflow: 'job', runId, input: { n: i + 1, nap: 4000 } })));
    await until('every run asleep', async () => (await Promise.all(ids.map((runId) => r2.call('status', { runId })))).every((s) => s === 'sleeping'));
    await r1.kill();
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

  it.skipIf(!LONG)('steady load while a Restate node and a replica are SIGKILLed and restarted (TRANQUIL_CLUSTER_LONG=1)', async () => {
    const [r1, r2] = replicas as [Replica, Replica];
    const node3 = cluster.nodes[2]!;
    const ids = Array.from({ length: 40 }, (_, i) => `load${i + 1}`);
    const results: Promise<{ status: string; output: unknown }>[] = [];
    let r1Up = true;
    for (const [i, runId] of ids.entries()) {
      const via = i % 2 && r1Up ? r1 : r2;
      await via.call('trigger', { workflow: 'job', runId, input: { n: i + 1, nap: 1000 + (i % 5) * 500 } });
      if (i === 10) await cluster.kill(node3);
      if (i === 20) await r1.kill().then(() => (r1Up = false));
      if (i === 25) cluster.start(node3);
      if (i === 30) await r1.start(configs.get(r1)).then(() => (r1Up = true));
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const runId of ids) results.push(r2.call('result', { runId, timeout: '120s' }));
    const views = await Promise.all(results);
    views.forEach((v, i) => expect(v).toMatchObject({ status: 'succeeded', output: { n: i + 1, a: 2 * (i + 1), b: 2 * (i + 1) + 1 } }));
    for (const id of ids) {
      // A body killed mid-way may rightly run again; a journaled one never does.
      expect(ranFor(`${id}/a`).length, `step a of ${id}`).toBeGreaterThanOrEqual(1);
      expect(ranFor(`${id}/b`).length, `step b of ${id}`).toBeGreaterThanOrEqual(1);
    }
    // Through both kills, each schedule slot was decided once, and fired slots have one run each.
    const slots = await r1.call<{ slot: string; runId?: string }[]>('slots');
    expect(new Set(slots.map((s) => s.slot)).size).toBe(slots.length);
    expect(new Set(slots.filter((s) => s.runId).map((s) => s.runId)).size).toBe(slots.filter((s) => s.runId).length);
  }, 300_000);
});
