// The test's handle on one engine replica process (replica-child.ts) inside a host namespace:
// start it, call it (JSON lines), SIGKILL it by PID.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestNetwork } from './netns.ts';

export class Replica {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly net: TestNetwork,
    readonly name: string,
    readonly ns: string,
    private readonly env: Record<string, string>,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process (`env` adds to this start's environment only, e.g. a skewed clock);
   *  resolves once its engine has started. */
  start(config: unknown, env: Record<string, string> = {}): Promise<void> {
    const c = this.net.spawnIn(this.ns, process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'replica-child.ts')], {
      env: { ...process.env, ...this.env, ...env, REPLICA_NAME: this.name, REPLICA_CONFIG: JSON.stringify(config) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child = c;
    this.exited = new Promise((r) => c.once('exit', () => r()));
    return new Promise<void>((resolve, reject) => {
      c.once('exit', (code, sig) => {
        const err = new Error(`replica ${this.name} exited (${code ?? sig})`);
        reject(err);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
      createInterface({ input: c.stdout! }).on('line', (line) => {
        let msg: { ready?: boolean; id?: number; ok?: boolean; value?: unknown; error?: string };
        try {
          msg = JSON.parse(line);
        } catch {
          return; // not ours
        }
        if (msg.ready) return resolve();
        const p = msg.id !== undefined ? this.pending.get(msg.id) : undefined;
        if (!p) return;
        this.pending.delete(msg.id!);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(new Error(`${this.name}: ${msg.error}`));
      });
    });
  }

  call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const c = this.child;
    if (!c?.stdin) return Promise.reject(new Error(`replica ${this.name} is not running`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      c.stdin!.write(`${JSON.stringify({ id, op, ...args })}\n`);
    });
  }

  async kill(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (c?.pid && c.exitCode === null && c.signalCode === null) process.kill(c.pid, 'SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    if (!this.child) return;
    await this.call('stop').catch(() => {});
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000))]);
    await this.kill();
  }
}
