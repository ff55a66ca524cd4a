// Latency without netem (issue 44): this machine's kernel has no netem qdisc, so the cluster
// test's links get their delay from a userspace TCP relay instead. Each route listens on one
// address and forwards every accepted connection to its target; each direction's bytes are
// held, then written in arrival order, released at max(previous release, arrival + delay +
// jitter) (jitter uniform in ±jitterMs): a later chunk never overtakes an earlier one, as on a
// TCP link. The delay is changed at run time (0 passes bytes straight on), so a route can sit
// in a path from the start and carry latency only while a fault is held.
// The relay is a child process (latency-relay-child.ts) started and stopped by PID; it exits
// when its stdin closes, so it cannot outlive the test process.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stopChild } from './stop-child.ts';

export interface Route {
  name: string;
  listen: { host: string; port?: number };
  target: { host: string; port: number };
}

export interface Delay {
  delayMs: number;
  jitterMs: number;
}

/** When a chunk arriving at `arrival` leaves: never before the one ahead of it (order kept). */
export function releaseAt(previous: number, arrival: number, d: Delay, rand: () => number = Math.random): number {
  const jitter = d.jitterMs ? (rand() * 2 - 1) * d.jitterMs : 0;
  return Math.max(previous, arrival + Math.max(0, d.delayMs + jitter));
}

/** Forwards `from`'s bytes (and its end) to `to` after the current delay, in order. No
 *  backpressure: the test's traffic is small. */
export function delayedPipe(from: Socket, to: Socket, delay: () => Delay): void {
  const queue: { at: number; data?: Buffer }[] = []; // no data: the end
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const now = Date.now();
    while (queue.length && queue[0]!.at <= now) {
      const { data } = queue.shift()!;
      if (to.destroyed) return;
      if (data) to.write(data);
      else to.end();
    }
    if (queue.length) timer = setTimeout(flush, queue[0]!.at - now);
  };
  const push = (data?: Buffer) => {
    const d = delay();
    if (d.delayMs === 0 && d.jitterMs === 0 && queue.length === 0) {
      if (data) to.write(data);
      else to.end();
      return;
    }
    last = releaseAt(last, Date.now(), d);
    queue.push({ at: last, data });
    if (!timer) timer = setTimeout(flush, Math.max(0, queue[0]!.at - Date.now()));
  };
  from.on('data', (b: Buffer) => push(b));
  from.on('end', () => push());
  from.on('close', () => {
    // A reset (not an orderly end) is passed on at once, as a dropped link is not delayed.
    if (from.errored || !from.readableEnded) {
      if (timer) clearTimeout(timer);
      queue.length = 0;
      to.destroy();
    }
  });
}

/** Connects an accepted socket to its target through two delayed pipes. */
export function relayConnection(client: Socket, target: Route['target'], delay: () => Delay): void {
  // Half-open both ways: one side's end is passed on after the delay, not answered at once.
  const upstream = connect({ port: target.port, host: target.host, allowHalfOpen: true });
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  delayedPipe(client, upstream, delay);
  delayedPipe(upstream, client, delay);
}

/** The test's handle on the relay child. */
export class LatencyRelay {
  private child: ChildProcess | undefined;
  private readonly waiting: ((msg: Record<string, unknown>) => void)[] = [];
  /** Each route's listening address, `host:port`, by name (set by start()). */
  readonly addresses = new Map<string, { host: string; port: number }>();

  constructor(private readonly routes: Route[]) {}

  async start(): Promise<void> {
    const c = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'latency-relay-child.ts')], {
      env: { ...process.env, RELAY_ROUTES: JSON.stringify(this.routes) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child = c;
    createInterface({ input: c.stdout! }).on('line', (line) => {
      try {
        this.waiting.shift()?.(JSON.parse(line));
      } catch {
        // not ours
      }
    });
    const ready = await this.next(c);
    for (const [name, port] of Object.entries(ready.ports as Record<string, number>)) {
      this.addresses.set(name, { host: this.routes.find((r) => r.name === name)!.listen.host, port });
    }
  }

  url(name: string): string {
    const a = this.addresses.get(name);
    if (!a) throw new Error(`no relay route ${name}`);
    return `http://${a.host}:${a.port}`;
  }

  /** Sets every route's delay (each direction); resolves once the child applied it. */
  async set(d: Delay): Promise<void> {
    const c = this.child;
    if (!c?.stdin) throw new Error('latency relay is not running');
    const ack = this.next(c);
    c.stdin.write(`${JSON.stringify(d)}\n`);
    await ack;
  }

  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    await stopChild(c, 'SIGTERM');
  }

  private next(c: ChildProcess): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`latency relay exited (${code})`));
      c.once('exit', onExit);
      this.waiting.push((msg) => (c.off('exit', onExit), resolve(msg)));
    });
  }
}
