// Network and clock faults for the cluster test, made with each host namespace's own tools:
// an nftables table per fault inside the namespace (a cut drops packets to and from the
// peers, silently, as a partitioned link does; a lossy link drops a share at random) and
// `tc` on the host's eth0 (netem delay where the kernel has it, else a tbf rate limit, a slow
// link). Kernels without netem (this machine's: CONFIG_NET_SCH_NETEM is not set) get their
// delay from a userspace relay instead (latency-relay.ts, put on the links by
// latency-path.ts). Heal deletes what was added; removing the namespaces (TestNetwork.remove)
// deletes it all the same, so nothing outlives the test even when it fails.
// The clock: Linux has no per-namespace wall clock, so a skewed replica runs under
// libfaketime (LD_PRELOAD): that one process's Date.now(), new Date() and the times it
// journals are off by the offset; its monotonic clock (timers) is left alone.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { needs } from '../needs.ts';

/** nft for the cuts and loss, faketime (its libfaketime) for the skewed clock. */
export const faultNeed = needs('nftables', 'faketime');
const NFT = faultNeed.programs.nftables ?? '/usr/sbin/nft';
const FAKETIME_LIB = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/faketime/libfaketime.so.1'].find((f) => existsSync(f));

const inNs = (ns: string, cmd: string, args: string[], input?: string) =>
  execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();

let netem: boolean | undefined;
/** Whether this kernel has the netem qdisc (many VM kernels ship without it). */
export function netemAvailable(ns: string): boolean {
  if (netem === undefined) {
    try {
      inNs(ns, 'tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms']);
      inNs(ns, 'tc', ['qdisc', 'del', 'dev', 'lo', 'root']);
      netem = true;
    } catch {
      netem = false;
    }
  }
  return netem;
}

export interface LinkDegrade {
  lossPct: number;
  delayMs: number;
  jitterMs: number;
  /** Without netem: the rate the link is held to (the delay then comes from latency-relay.ts). */
  rateKbit: number;
}

export class Faults {
  /** Every (namespace, nft table) and every tc root added and not yet removed. */
  private readonly tables = new Set<string>();
  private readonly qdiscs = new Set<string>();

  /** Drops every packet between `ns` and these addresses, both ways, until heal(ns). */
  cut(ns: string, peers: string[]): void {
    const set = `{ ${peers.join(', ')} }`;
    inNs(ns, NFT, ['-f', '-'], `table inet tqcut {
  chain out { type filter hook output priority 0; ip daddr ${set} drop; }
  chain in { type filter hook input priority 0; ip saddr ${set} drop; }
}
`);
    this.tables.add(`${ns} tqcut`);
  }

  heal(ns: string): void {
    this.dropTable(ns, 'tqcut');
  }

  /** Loss (and delay, or a rate limit where netem is missing) on the host's link; returns what was applied. */
  degrade(ns: string, d: LinkDegrade): string {
    if (netemAvailable(ns)) {
      inNs(ns, 'tc', ['qdisc', 'add', 'dev', 'eth0', 'root', 'netem', 'delay', `${d.delayMs}ms`, `${d.jitterMs}ms`, 'loss', `${d.lossPct}%`]);
      this.qdiscs.add(ns);
      return `netem delay ${d.delayMs}ms ${d.jitterMs}ms loss ${d.lossPct}%`;
    }
    // Loss both ways: each direction drops its share.
    inNs(ns, NFT, ['-f', '-'], `table inet tqloss {
  chain out { type filter hook output priority 0; oifname "eth0" numgen random mod 100 < ${d.lossPct} drop; }
  chain in { type filter hook input priority 0; iifname "eth0" numgen random mod 100 < ${d.lossPct} drop; }
}
`);
    this.tables.add(`${ns} tqloss`);
    inNs(ns, 'tc', ['qdisc', 'add', 'dev', 'eth0', 'root', 'tbf', 'rate', `${d.rateKbit}kbit`, 'burst', '16kb', 'latency', '500ms']);
    this.qdiscs.add(ns);
    return `nft loss ${d.lossPct}% each way, tbf rate ${d.rateKbit}kbit (no netem in this kernel: no delay from tc; a latency relay adds it)`;
  }

  restore(ns: string): void {
    this.dropTable(ns, 'tqloss');
    if (this.qdiscs.delete(ns)) tryRun(() => inNs(ns, 'tc', ['qdisc', 'del', 'dev', 'eth0', 'root']));
  }

  /** Removes every fault still in place (a finally block's call). */
  healAll(): void {
    for (const key of [...this.tables]) {
      const [ns, table] = key.split(' ') as [string, string];
      this.dropTable(ns, table);
    }
    for (const ns of [...this.qdiscs]) this.restore(ns);
  }

  private dropTable(ns: string, table: string): void {
    if (this.tables.delete(`${ns} ${table}`)) tryRun(() => inNs(ns, NFT, ['delete', 'table', 'inet', table]));
  }
}

function tryRun(fn: () => unknown): void {
  try {
    fn();
  } catch {
    // the namespace is gone already
  }
}

/** Whether a TCP connection from inside `ns` to address:port opens within 2 s (a cut holds, or healed). */
export function canReach(ns: string, address: string, port: number): boolean {
  try {
    inNs(ns, 'timeout', ['2', 'bash', '-c', `exec 3<>/dev/tcp/${address}/${port}`]);
    return true;
  } catch {
    return false;
  }
}

/** Environment that starts a process with its wall clock `offsetSec` seconds off (libfaketime). */
export function skewedClockEnv(offsetSec: number): Record<string, string> {
  if (!FAKETIME_LIB) throw new Error('libfaketime.so.1 not found (the faketime package installs it)');
  return { LD_PRELOAD: FAKETIME_LIB, FAKETIME: `${offsetSec >= 0 ? '+' : ''}${offsetSec}`, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}
