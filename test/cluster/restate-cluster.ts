// A 3-node restate-server cluster for tests, one node per host namespace: same cluster name,
// every node in the metadata client's address list, replicated log with replication 2, node 1
// auto-provisions. Each node signs requests with its own ed25519 key (the engine replicas
// trust all three public keys). Started and stopped by PID; data in a temp dir per node.
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { restatePublicKey } from '../../src/adapters/restate/request-identity.ts';
import type { TestNetwork } from './netns.ts';
import { stopChild } from './stop-child.ts';

const require = createRequire(import.meta.url);
export const RESTATE_BINARY = join(dirname(require.resolve('@restatedev/restate-server-linux-x64/package.json')), 'bin', 'restate-server');

export interface ClusterNode {
  id: number;
  ns: string;
  address: string;
  child?: ChildProcess;
  baseDir: string;
  keyFile: string;
  publicKey: string;
  ingressUrl: string;
  adminUrl: string;
}

export class RestateCluster {
  readonly nodes: ClusterNode[] = [];
  readonly name: string;

  constructor(
    private readonly net: TestNetwork,
    private readonly dir: string,
    count = 3,
    firstOctet = 11,
  ) {
    this.name = `tq-cluster-${net.prefix}`;
    for (let i = 1; i <= count; i++) {
      const { ns, address } = net.addHost(`n${i}`, firstOctet + i - 1);
      const baseDir = join(dir, `node${i}`);
      mkdirSync(baseDir, { recursive: true, mode: 0o700 });
      const keyFile = join(baseDir, 'identity.pem');
      const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      writeFileSync(keyFile, pem, { mode: 0o600 });
      this.nodes.push({ id: i, ns, address, baseDir, keyFile, publicKey: restatePublicKey(pem), ingressUrl: `http://${address}:8080`, adminUrl: `http://${address}:9070` });
    }
  }

  get publicKeys(): string[] {
    return this.nodes.map((n) => n.publicKey);
  }

  start(node: ClusterNode): void {
    const addresses = this.nodes.map((n) => `"http://${n.address}:5122"`).join(',');
    const log = openSync(join(node.baseDir, 'server.log'), 'a');
    // Its own temp dir (as the engine does for its embedded server): each start makes
    // invoker-<ulid> dirs there; a restart sweeps what the killed one left.
    const tmp = join(node.baseDir, 'tmp');
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { mode: 0o700 });
    node.child = this.net.spawnIn(
      node.ns,
      RESTATE_BINARY,
      ['--base-dir', node.baseDir, '--node-name', `n${node.id}`, '--force-node-id', String(node.id), '--bind-ip', node.address, '--bind-port', '5122',
        '--advertised-address', `http://${node.address}:5122`, '--listen-mode', 'tcp', '--no-logo', '--auto-provision', String(node.id === 1)],
      {
        stdio: ['ignore', log, log],
        env: {
          ...process.env,
          TMPDIR: tmp,
          RESTATE_CLUSTER_NAME: this.name,
          RESTATE_METADATA_CLIENT__ADDRESSES: `[${addresses}]`,
          RESTATE_DEFAULT_REPLICATION: '2',
          RESTATE_DEFAULT_NUM_PARTITIONS: '4',
          RESTATE_GOSSIP_SUSPECT_INTERVAL: '1s',
          RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: node.keyFile,
          RESTATE_DISABLE_TELEMETRY: 'true',
          RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
          DO_NOT_TRACK: '1',
        },
      },
    );
    closeSync(log);
  }

  startAll(): void {
    for (const n of this.nodes) this.start(n);
  }

  /** SIGKILL by PID; resolves when the process is gone. */
  async kill(node: ClusterNode): Promise<void> {
    const c = node.child;
    node.child = undefined;
    await stopChild(c, 'SIGKILL');
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n)));
  }

  /** Resolves once an invocation-ready query answers on the node's admin API. */
  async waitAdmin(node: ClusterNode, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const r = await fetch(`${node.adminUrl}/query`, {
          method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ query: 'SELECT count(*) AS n FROM sys_invocation' }), signal: AbortSignal.timeout(2000),
        });
        if (r.ok) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`restate node n${node.id} admin not ready within ${timeoutMs} ms (see ${node.baseDir}/server.log)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
