// Test hosts: Linux network namespaces on one private /24, created and removed by the test.
// A "lan" namespace holds a bridge (the switch, address .1); each host is a namespace with a
// veth whose far end is plugged into the bridge; the test process itself gets one veth into
// the lan (address .254) so it can reach every host. Names carry a per-run prefix; remove()
// deletes every namespace this object made (which deletes their veths, and the test's one).
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** Why namespaces cannot be used here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces are Linux-only';
  if (process.getuid?.() !== 0) return 'creating network namespaces needs root';
  if (!existsSync('/usr/sbin/ip') && !existsSync('/sbin/ip') && !existsSync('/usr/bin/ip')) return 'iproute2 (ip) is not installed';
  try {
    const probe = `tqprobe${process.pid}`;
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
  } catch (err) {
    return `ip netns add failed: ${(err as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

/** A /24 not routed here yet (10.213.N.0/24, N from the PID, then the next free one). */
function freeSubnet(): string {
  const routes = ip('-4', 'route');
  for (let i = 0; i < 250; i++) {
    const n = (process.pid + i) % 250;
    const net = `10.213.${n}`;
    if (!routes.includes(`${net}.`)) return net;
  }
  throw new Error('no free 10.213.x.0/24 subnet');
}

export class TestNetwork {
  readonly prefix: string;
  readonly subnet: string;
  private readonly made: string[] = [];
  private hostVeth: string;
  private nextIf = 0;

  constructor() {
    // Interface names are at most 15 characters: tq + 5 digits + role.
    this.prefix = `tq${String(process.pid % 100_000).padStart(5, '0')}`;
    this.subnet = freeSubnet();
    this.hostVeth = `${this.prefix}h`;
  }

  get lan(): string {
    return `${this.prefix}lan`;
  }
  /** The test process's own address on the lan. */
  get testAddress(): string {
    return `${this.subnet}.254`;
  }
  get lanAddress(): string {
    return `${this.subnet}.1`;
  }

  private addNs(name: string): void {
    ip('netns', 'add', name);
    this.made.push(name);
    ip('-n', name, 'link', 'set', 'lo', 'up');
  }

  create(): void {
    this.addNs(this.lan);
    ip('-n', this.lan, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', this.lan, 'addr', 'add', `${this.lanAddress}/24`, 'dev', 'br0');
    ip('-n', this.lan, 'link', 'set', 'br0', 'up');
    ip('link', 'add', this.hostVeth, 'type', 'veth', 'peer', 'name', 'host0', 'netns', this.lan);
    ip('addr', 'add', `${this.testAddress}/24`, 'dev', this.hostVeth);
    ip('link', 'set', this.hostVeth, 'up');
    ip('-n', this.lan, 'link', 'set', 'host0', 'master', 'br0', 'up');
  }

  /** A new host namespace with address <subnet>.<octet>; returns the namespace name. */
  addHost(role: string, octet: number): { ns: string; address: string } {
    const ns = `${this.prefix}${role}`;
    this.addNs(ns);
    const port = `p${this.nextIf++}`;
    ip('-n', this.lan, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
    ip('-n', this.lan, 'link', 'set', port, 'master', 'br0', 'up');
    const address = `${this.subnet}.${octet}`;
    ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    ip('-n', ns, 'link', 'set', 'eth0', 'up');
    return { ns, address };
  }

  /** Spawns a command inside a namespace (`ip netns exec` execs it: the PID is the command's). */
  spawnIn(ns: string, command: string, args: string[], opts: SpawnOptions = {}): ChildProcess {
    return spawn('ip', ['netns', 'exec', ns, command, ...args], opts);
  }

  /** Deletes every namespace made (and with them every veth, the test's own included). */
  remove(): void {
    for (const ns of this.made.reverse()) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
    this.made.length = 0;
    try {
      if (readFileSync('/proc/net/dev', 'utf8').includes(`${this.hostVeth}:`)) ip('link', 'del', this.hostVeth);
    } catch {
      // gone with the lan namespace
    }
  }
}
