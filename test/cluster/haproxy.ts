// HAProxy (Debian's haproxy, /usr/sbin/haproxy) in TCP mode in front of the engine replicas: HTTP/2
// from Restate passes through untouched. Health checks every 300 ms take a dead replica out;
// `option redispatch` + `retries` send a refused connection to the other one. In TCP mode a
// connection stays with the replica it was first sent to, and Restate multiplexes its calls
// over few long-lived HTTP/2 connections: a replica cut off silently (a partition, not a
// crash that resets its sockets) would hold those calls until TCP gave up, so a replica
// marked down has its sessions shut (`on-marked-down shutdown-sessions`) and Restate
// reconnects to the other (issue 44). Its config is
// written to a temp dir; it runs in the foreground (-db) and is stopped by its PID.
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTALL_COMMAND, needs } from '../needs.ts';
import type { TestNetwork } from './netns.ts';
import { stopChild } from './stop-child.ts';

/** Whether it is here, and the options that let the skip summary name it when it is not. */
export const haproxyNeed = needs('haproxy');
export const HAPROXY = haproxyNeed.programs.haproxy ?? '/usr/sbin/haproxy';

/** Why the bench cannot run it (the tests read haproxyNeed). */
export function haproxyUnavailable(): string | undefined {
  return haproxyNeed.skipReason && `${haproxyNeed.skipReason} (${INSTALL_COMMAND} installs it)`;
}

/** A server; `check` (host:port) is where its health is checked when traffic goes through a
 *  relay (latency-relay.ts), which accepts connections whether the replica is up or not. */
export interface Backend {
  name: string;
  address: string;
  check?: string;
}

function checkAt(b: Backend): string {
  if (!b.check) return '';
  const [host, port] = b.check.split(':');
  return ` addr ${host} port ${port}`;
}

export class Haproxy {
  private child: ChildProcess | undefined;

  constructor(
    private readonly net: TestNetwork,
    private readonly ns: string,
    private readonly dir: string,
    readonly bind: string,
    private backends: Backend[],
  ) {}

  /** The servers its next start() uses (restart() to apply). */
  setBackends(backends: Backend[]): void {
    this.backends = backends;
  }

  start(): void {
    const cfg = join(this.dir, 'haproxy.cfg');
    writeFileSync(
      cfg,
      [
        'global',
        '  maxconn 4096',
        'defaults',
        '  mode tcp',
        '  timeout connect 1s',
        '  timeout client 10m',
        '  timeout server 10m',
        '  option redispatch',
        '  retries 3',
        'frontend replicas',
        `  bind ${this.bind}`,
        '  default_backend apps',
        'backend apps',
        '  balance roundrobin',
        ...this.backends.map((b) => `  server ${b.name} ${b.address} check${checkAt(b)} inter 300 fall 3 rise 2 on-marked-down shutdown-sessions`),
        '',
      ].join('\n'),
    );
    // Its notes (servers going DOWN/UP) go to a file beside the config.
    const log = openSync(join(this.dir, 'haproxy.log'), 'a');
    this.child = this.net.spawnIn(this.ns, HAPROXY, ['-f', cfg, '-db'], { stdio: ['ignore', log, log] });
    closeSync(log);
  }

  /** Stops and starts it: every connection through it is shut, so Restate's next ones are
   *  spread over the replicas again (a replica restarted after a kill otherwise gets none:
   *  Restate keeps the connections it moved to the other). */
  async restart(): Promise<void> {
    await this.stop();
    this.start();
  }

  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    await stopChild(c, 'SIGTERM');
  }
}
