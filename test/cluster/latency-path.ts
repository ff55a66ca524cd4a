// Puts latency relays (latency-relay.ts) on the cluster's links for one scenario (issue 44):
// the balancer's servers become relays to the replicas' endpoints (health still checked on
// the replicas themselves), and each replica reaches its Restate node's ingress and admin
// through a relay. The relays listen on the test's own lan address; their traffic still
// crosses every host's eth0, so the loss nftables adds there applies to it as well.
// Each replica is restarted (one at a time, the other serving) with the relay URLs, and again
// with its own config after; the balancer is pointed back and the relay stopped by PID, even
// when the scenario fails.
import { connect } from 'node:net';
import { LatencyRelay, type Route } from './latency-relay.ts';
import { ENDPOINT_PORT, type Topology } from './topology.ts';

type Config = { restate: { ingressUrl: string; adminUrl: string } };

export async function withLatencyPath(t: Topology, fn: (relay: LatencyRelay) => Promise<void>): Promise<void> {
  const at = { host: t.net.testAddress };
  const routes: Route[] = [];
  t.hosts.forEach((h, i) => routes.push({ name: `lb-r${i + 1}`, listen: at, target: { host: h.address, port: ENDPOINT_PORT } }));
  t.replicas.forEach((_, i) => {
    const node = t.cluster.nodes[i]!;
    routes.push({ name: `ingress-n${node.id}`, listen: at, target: { host: node.address, port: 8080 } });
    routes.push({ name: `admin-n${node.id}`, listen: at, target: { host: node.address, port: 9070 } });
  });
  const relay = new LatencyRelay(routes);
  const restartWith = async (config: (c: Config, i: number) => Config) => {
    for (const [i, r] of t.replicas.entries()) {
      await r.kill();
      await r.start(config(t.configs.get(r) as Config, i));
    }
  };
  try {
    await relay.start();
    await restartWith((c, i) => ({
      ...c,
      restate: { ...c.restate, ingressUrl: relay.url(`ingress-n${t.cluster.nodes[i]!.id}`), adminUrl: relay.url(`admin-n${t.cluster.nodes[i]!.id}`) },
    }));
    t.lb.setBackends(t.backends.map((b, i) => {
      const via = relay.addresses.get(`lb-r${i + 1}`)!;
      return { ...b, address: `${via.host}:${via.port}`, check: b.address };
    }));
    await t.lb.restart();
    await fn(relay);
  } finally {
    try {
      await relay.set({ delayMs: 0, jitterMs: 0 }).catch(() => {});
      t.lb.setBackends(t.backends);
      await t.lb.restart();
      await restartWith((c) => c);
    } finally {
      await relay.stop();
    }
  }
}

/** Milliseconds from sending an HTTP/2 preface and SETTINGS to `host:port` until the server's
 *  SETTINGS ACK comes back: one round trip to the replica's endpoint (its own SETTINGS, sent
 *  on connect, would only be one way). */
export function h2RoundTrip(host: string, port: number, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect(port, host);
    let t0 = 0;
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => (s.destroy(), reject(new Error(`no SETTINGS ACK from ${host}:${port} within ${timeoutMs} ms`))), timeoutMs);
    s.on('error', (e) => (clearTimeout(timer), reject(e)));
    s.on('connect', () => {
      t0 = performance.now();
      s.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
    });
    s.on('data', (b: Buffer) => {
      buf = Buffer.concat([buf, b]);
      // Frames: 3 bytes length, type, flags, 4 bytes stream id, then the payload.
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) return;
        const [type, flags] = [buf[3], buf[4]!];
        buf = buf.subarray(9 + len);
        if (type === 4 && flags & 1) {
          clearTimeout(timer);
          s.destroy();
          return resolve(performance.now() - t0);
        }
      }
    });
  });
}

/** Milliseconds for one GET of a Restate node's admin /health (any answer counts). */
export async function httpRoundTrip(url: string): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
  await r.arrayBuffer();
  return performance.now() - t0;
}
