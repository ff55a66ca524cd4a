// One Deno child process: spawned by absolute path with an explicit, minimal environment (the
// engine's own environment is never inherited: only DENO_DIR, the token and the declared
// variables), its stdout/stderr kept bounded (the last OUTPUT_KEEP bytes of each), stopped by
// its PID only.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import type { Readable, Writable } from 'node:stream';
import { signalPid } from '../../platform/pid.ts';
import { writtenBytes } from '../../platform/proc-io.ts';

const OUTPUT_KEEP = 64 * 1024;
/** How long a kill waits for bwrap to tell deno's pid before it kills bwrap itself. */
const WRAPPER_KILL_MS = 5_000;
/** How often a child's bytes written to storage are read (boundWrites). */
const WRITE_POLL_MS = 200;

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
  /** The wrapper's pid (bwrap or prlimit), or deno's when spawned directly. */
  private readonly spawnedPid: number;
  /** deno's own pid under bwrap (its --info-fd), once known. */
  private innerPid: number | undefined;
  readonly exited: Promise<ChildExit>;
  private out = '';
  private err = '';
  /** kill() was called before bwrap told deno's pid. */
  private killAsked = false;
  private readonly infoFd: boolean;
  /** boundWrites: the most this child may write to storage, and the poll that checks it. */
  private writeLimit: number | undefined;
  private writePoll: NodeJS.Timeout | undefined;
  /** The last reading of what deno wrote to storage (bytes, /proc/<pid>/io). */
  written = 0;
  /** What earlier children of its run wrote (boundWrites), for the message. */
  writtenBefore = 0;
  /** It went past its write bound and was killed for it (boundWrites). */
  overWritten = false;
  /** Its stdin, when spawned with `o.stdin` (a check child reads requests from it). */
  readonly stdin: Writable | null;

  /** `infoFd`: the command is bwrap writing its child's pid as JSON to fd 3. `o.stdin`: a
   *  pipe to its stdin; `o.onLine`: called with each complete line it prints on stdout. */
  constructor(file: string, args: readonly string[], env: Record<string, string>, cwd: string, infoFd = false, o: { stdin?: boolean; onLine?: (line: string) => void } = {}) {
    const stdin = o.stdin ? 'pipe' : 'ignore';
    const child = withPrivateUmask(() => spawn(file, args, { env, cwd, stdio: infoFd ? [stdin, 'pipe', 'pipe', 'pipe'] : [stdin, 'pipe', 'pipe'] }));
    this.stdin = child.stdin;
    // A child killed while a write is in flight: EPIPE is its ending, reported by `exited`.
    child.stdin?.on('error', () => {});
    if (child.pid === undefined) throw new Error(`could not start ${file}`);
    this.spawnedPid = child.pid;
    this.infoFd = infoFd;
    const keep = (prev: string, chunk: Buffer) => {
      const next = prev + chunk.toString('utf8');
      return next.length > OUTPUT_KEEP ? next.slice(-OUTPUT_KEEP) : next;
    };
    child.stdout!.on('data', (c: Buffer) => (this.out = keep(this.out, c)));
    if (o.onLine) {
      const onLine = o.onLine;
      let partial = '';
      const text = new StringDecoder('utf8'); // a character split across chunks stays whole
      child.stdout!.on('data', (c: Buffer) => {
        const lines = (partial + text.write(c)).split('\n');
        partial = lines.pop()!;
        for (const line of lines) onLine(line);
      });
    }
    child.stderr!.on('data', (c: Buffer) => (this.err = keep(this.err, c)));
    const info = infoFd ? (child.stdio[3] as Readable | null) : null;
    if (info) {
      let text = '';
      info.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (m && this.innerPid === undefined) {
          this.innerPid = Number(m[1]);
          if (this.killAsked) this.kill();
        }
      });
      info.on('error', () => {});
    }
    this.exited = new Promise((resolve) => {
      child.once('error', () => resolve({ code: null, signal: null }));
      child.once('close', (code, signal) => {
        // bwrap reports its child killed by a signal as exit 128+n.
        const sig = infoFd && code !== null && code > 128 && code < 160 ? signalName(code - 128) : undefined;
        resolve(sig ? { code: null, signal: sig } : { code, signal });
      });
    });
  }

  /** Kills the child once what deno has written to storage passes `limit` bytes (read every
   *  WRITE_POLL_MS from /proc/<pid>/io, so a fast writer may pass it by what it writes in
   *  that time; Linux only). Called again, it changes the limit; `before`: what earlier
   *  children of its run wrote, already taken off `limit`. */
  boundWrites(limit: number, before = 0): void {
    this.writeLimit = limit;
    this.writtenBefore = before;
    if (this.writePoll || process.platform !== 'linux') return;
    this.writePoll = setInterval(() => this.checkWrites(), WRITE_POLL_MS);
    this.writePoll.unref();
    void this.exited.then(() => clearInterval(this.writePoll));
  }

  private checkWrites(): void {
    if (this.infoFd && this.innerPid === undefined) return; // bwrap's pid, not deno's yet
    const n = writtenBytes(this.pid);
    if (n === undefined) return;
    this.written = n;
    if (this.writeLimit !== undefined && n > this.writeLimit && !this.overWritten) {
      this.overWritten = true;
      this.kill();
    }
  }

  /** deno's pid (the one its Deno.pid says), or the wrapper's until bwrap told it. */
  get pid(): number {
    return this.innerPid ?? this.spawnedPid;
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  /** Kills deno by its pid (its wrapper then exits and is reaped). Under bwrap, while deno's
   *  pid is not known yet, the kill waits for it: bwrap killed before it has let its own
   *  child go leaves that child blocked forever, holding the output pipes (so `exited`
   *  never resolved). Only if bwrap says nothing within WRAPPER_KILL_MS is it killed. */
  kill(): void {
    if (this.innerPid !== undefined || !this.infoFd) return void signalPid(this.innerPid ?? this.spawnedPid, 'SIGKILL');
    if (this.killAsked) return;
    this.killAsked = true;
    setTimeout(() => {
      if (this.innerPid === undefined) signalPid(this.spawnedPid, 'SIGKILL');
    }, WRAPPER_KILL_MS).unref();
  }
}

function signalName(n: number): NodeJS.Signals | undefined {
  const found = Object.entries(constants.signals).find(([, v]) => v === n);
  return found?.[0] as NodeJS.Signals | undefined;
}
