// The cluster the tests and the bench row (bench/lib/cluster.ts) build: network namespaces
// standing for hosts, three restate-server nodes (replication 2, each signing with its own
// key), and two engine replicas of one app serving ONE deployment URL through HAProxy in the
// lan namespace. Replica r1 talks to node 1, r2 to node 2. Every process is started and
// stopped by PID; stop() removes the namespaces and the temp dir.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Haproxy, type Backend } from './haproxy.ts';
import { TestNetwork } from './netns.ts';
import { Replica } from './replica.ts';
import { RestateCluster } from './restate-cluster.ts';

export const ENDPOINT_PORT = 9080;

export interface Topology {
  net: TestNetwork;
  dir: string;
  cluster: RestateCluster;
  lb: Haproxy;
  /** The balancer's servers as built: straight to each replica's endpoint. */
  backends: Backend[];
  /** Each replica's host (r1, r2 in order). */
  hosts: { ns: string; address: string }[];
  /** Step attempts of every replica, one line each (replica-child.ts). */
  attempts: string;
  replicas: Replica[];
  /** Each replica's engine config, to start it again after a kill. */
  configs: Map<Replica, unknown>;
  stop(): Promise<void>;
}

/** Builds it all; resolves once every node answers and both replicas' engines started. */
export async function startTopology(tag: string): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), `tranquil-${tag}-`));
  const attempts = join(dir, 'attempts.log');
  writeFileSync(attempts, '');
  const net = new TestNetwork();
  const replicas: Replica[] = [];
  const configs = new Map<Replica, unknown>();
  let cluster: RestateCluster | undefined;
  let lb: Haproxy | undefined;
  const stop = async () => {
    await Promise.all(replicas.map((r) => r.kill().catch(() => {})));
    await lb?.stop().catch(() => {});
    await cluster?.stopAll().catch(() => {});
    net.remove();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    net.create();
    cluster = new RestateCluster(net, dir);
    const c = cluster;
    const hosts = [net.addHost('r1', 21), net.addHost('r2', 22)];
    const backends = hosts.map((h, i) => ({ name: `r${i + 1}`, address: `${h.address}:${ENDPOINT_PORT}` }));
    lb = new Haproxy(net, net.lan, dir, `${net.lanAddress}:${ENDPOINT_PORT}`, backends);
    c.startAll();
    lb.start();
    hosts.forEach((h, i) => {
      const node = c.nodes[i]!;
      const r = new Replica(net, `r${i + 1}`, h.ns, { ATTEMPTS: attempts });
      configs.set(r, {
        dataDir: join(dir, `replica${i + 1}`),
        restate: {
          ingressUrl: node.ingressUrl, adminUrl: node.adminUrl, identityKeys: c.publicKeys,
          endpoint: { host: h.address, port: ENDPOINT_PORT, url: `http://${net.lanAddress}:${ENDPOINT_PORT}/` },
          triggers: 'restate',
        },
      });
      replicas.push(r);
    });
    // Both at once, while the nodes boot (the engine rides out an admin API that is not up
    // yet): registration must come out as one deployment whoever is first.
    await Promise.all([...c.nodes.map((n) => c.waitAdmin(n)), ...replicas.map((r) => r.start(configs.get(r)))]);
    return { net, dir, cluster: c, lb, backends, hosts, attempts, replicas, configs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
