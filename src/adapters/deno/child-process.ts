// One Deno child process: spawned by absolute path with an explicit, minimal environment (the
// engine's own environment is never inherited: only DENO_DIR, the token and the declared
// variables), its stdout/stderr kept bounded (the last OUTPUT_KEEP bytes of each), stopped by
// its PID only.
import { spawn } from 'node:child_process';
import { signalPid } from '../../platform/pid.ts';

const OUTPUT_KEEP = 64 * 1024;

/** Runs `spawn` (which forks synchronously) under umask 077, so that what Deno itself
 *  creates (its DENO_DIR cache under the data dir) is owner-only too; the engine's own
 *  umask is restored at once. In a worker thread umask cannot be set: the data dir's 0700
 *  directories still keep others out. */
export function withPrivateUmask<T>(fn: () => T): T {
  let old: number | undefined;
  try {
    old = process.umask(0o077);
  } catch {
    old = undefined;
  }
  try {
    return fn();
  } finally {
    if (old !== undefined) process.umask(old);
  }
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class DenoChild {
  readonly pid: number;
  readonly exited: Promise<ChildExit>;
  private out = '';
  private err = '';

  constructor(binary: string, args: readonly string[], env: Record<string, string>, cwd: string) {
    const child = withPrivateUmask(() => spawn(binary, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
    if (child.pid === undefined) throw new Error(`could not start ${binary}`);
    this.pid = child.pid;
    const keep = (prev: string, chunk: Buffer) => {
      const next = prev + chunk.toString('utf8');
      return next.length > OUTPUT_KEEP ? next.slice(-OUTPUT_KEEP) : next;
    };
    child.stdout.on('data', (c: Buffer) => (this.out = keep(this.out, c)));
    child.stderr.on('data', (c: Buffer) => (this.err = keep(this.err, c)));
    this.exited = new Promise((resolve) => {
      child.once('error', () => resolve({ code: null, signal: null }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  kill(): void {
    signalPid(this.pid, 'SIGKILL');
  }
}
