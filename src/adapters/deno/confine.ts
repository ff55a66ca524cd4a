// OS confinement of Deno children (issue 36, docs/runner.md "Threat model"): on Linux, each
// child (run and describe) runs under bubblewrap (Debian's `bubblewrap`), in a mount
// namespace that holds only the system's shared libraries, the deno binary, DENO_DIR, the
// engine's own modules (sdk, runner, src, zod), its snapshot (read-only) and the paths its
// declaration grants (read-only unless write was granted): a module load or a read that every
// other layer missed finds no file. The network namespace is shared (the child reaches the
// engine on 127.0.0.1; Deno's --allow-net holds the network to that port plus the grants).
// And a memory cap: V8's heap limit plus RLIMIT_DATA (prlimit), which also bounds the
// ArrayBuffers outside V8's heap. Where bwrap is missing, the other layers hold alone
// (said once at start).
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export type Confinement = { kind: 'bwrap'; bwrap: string } | { kind: 'none'; why: string };

/** Default memory cap of a run child, MiB (config deno.memory). */
export const DEFAULT_CHILD_MEMORY_MIB = 1024;
/** Default bound on the size of each file a child writes, bytes (config deno.maxFileBytes):
 *  1 GiB. RLIMIT_FSIZE bounds each file, not their total (docs/runner.md, Threat model). */
export const DEFAULT_CHILD_MAX_FILE_BYTES = 1024 * 1024 * 1024;
/** Default bound on what a run's children write to storage in total, bytes (config
 *  deno.maxWriteBytes): 4 GiB, counted per run in this engine process (docs/runner.md). */
export const DEFAULT_CHILD_MAX_WRITE_BYTES = 4 * 1024 * 1024 * 1024;
/** Writable address space V8 reserves at start (its code range, cages): RLIMIT_DATA counts
 *  it, so the limit is the cap plus this (measured: a deno 2.9 child does not start under 640). */
const DATA_BASELINE_MIB = 1024;

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

const detected = new Map<string, Confinement>();

/** Whether children can be confined here: bwrap on PATH that actually starts (a container
 *  without user namespaces refuses it). Cached per setting. */
export function detectConfinement(setting: 'auto' | 'off' = 'auto'): Confinement {
  if (setting === 'off') return { kind: 'none', why: 'config deno.sandbox is off' };
  const known = detected.get(setting);
  if (known) return known;
  let c: Confinement;
  if (process.platform !== 'linux') c = { kind: 'none', why: `no OS sandbox on ${process.platform} (bubblewrap is Linux only)` };
  else {
    const bwrap = onPath('bwrap');
    if (!bwrap) c = { kind: 'none', why: 'bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)' };
    else {
      try {
        execFileSync(bwrap, ['--ro-bind', '/', '/', '--die-with-parent', '--unshare-ipc', 'true'], { stdio: 'pipe', timeout: 10_000 });
        c = { kind: 'bwrap', bwrap };
      } catch (err) {
        c = { kind: 'none', why: `bwrap cannot start here (${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split('\n')[0]})` };
      }
    }
  }
  detected.set(setting, c);
  return c;
}

/** One line on how children are confined, said at start (when not) and by `tranquil check`
 *  and `why` of a file's run. */
export function confinementLine(c: Confinement): string {
  return c.kind === 'bwrap'
    ? `workflow file children are confined by bubblewrap (${c.bwrap}): each sees only its snapshot, the engine's modules and its granted paths`
    : `workflow file children are NOT confined by bubblewrap: ${c.why}; the module graph check and Deno permissions still hold`;
}

export interface ChildView {
  binary: string;
  denoDir: string;
  /** The snapshot dir (read-only) and the cwd. */
  snapshotDir: string;
  /** Read-only: the import map and the engine's own module dirs. */
  engine: readonly string[];
  /** Absolute paths granted by the declaration. */
  read: readonly string[];
  write: readonly string[];
  /** The declaration grants hosts beyond the engine: name resolution files are visible. */
  net: boolean;
}

const SYSTEM_LIBS = ['/lib', '/lib64', '/usr/lib', '/usr/lib64'];
const NAME_RESOLUTION = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/host.conf', '/etc/gai.conf'];

/** bwrap's arguments for one child: everything it sees, nothing else. */
export function bwrapArgs(v: ChildView): string[] {
  // No pid namespace and no /proc: the child keeps its host pid (the engine kills it by that
  // pid, learnt through --info-fd 3; `runs describe` shows it) and sees no other process.
  const a = ['--die-with-parent', '--info-fd', '3', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--dev', '/dev', '--tmpfs', '/tmp'];
  for (const lib of SYSTEM_LIBS) if (existsSync(lib)) a.push('--ro-bind', lib, lib);
  if (v.net) for (const f of NAME_RESOLUTION) a.push('--ro-bind-try', f, f);
  a.push('--ro-bind', v.binary, v.binary, '--bind', v.denoDir, v.denoDir);
  for (const p of v.engine) a.push('--ro-bind', p, p);
  // Parents before children, so that a write grant inside a read grant stays writable.
  const grants = [...v.read.map((p) => ({ p, rw: false })), ...v.write.map((p) => ({ p, rw: true }))].sort((x, y) => x.p.length - y.p.length);
  for (const g of grants) a.push(g.rw ? '--bind-try' : '--ro-bind-try', g.p, g.p);
  a.push('--ro-bind', v.snapshotDir, v.snapshotDir, '--chdir', v.snapshotDir);
  return a;
}

/** The command that runs `deno <args>` for a child: under bwrap when confined, with a data
 *  cap (RLIMIT_DATA) when `memoryMiB` is given and a bound on the size of each file it
 *  writes (RLIMIT_FSIZE) when `fileBytes` is given, both through prlimit where present. */
export function childCommand(c: Confinement, v: ChildView, denoArgs: readonly string[], memoryMiB?: number, fileBytes?: number): { file: string; args: string[]; infoFd: boolean } {
  let file = v.binary;
  let args = [...denoArgs];
  if (c.kind === 'bwrap') {
    args = [...bwrapArgs(v), '--', file, ...args];
    file = c.bwrap;
  }
  const limits: string[] = [];
  if (memoryMiB !== undefined) {
    const bytes = (memoryMiB + DATA_BASELINE_MIB) * 1024 * 1024;
    limits.push(`--data=${bytes}:${bytes}`);
  }
  if (fileBytes !== undefined) limits.push(`--fsize=${fileBytes}:${fileBytes}`);
  const prlimit = limits.length > 0 ? prlimitPath() : undefined;
  if (prlimit) {
    args = [...limits, '--', file, ...args];
    file = prlimit;
  }
  return { file, args, infoFd: c.kind === 'bwrap' };
}

let prlimitFound: string | null | undefined;
function prlimitPath(): string | undefined {
  if (prlimitFound === undefined) prlimitFound = process.platform === 'linux' ? (onPath('prlimit') ?? null) : null;
  return prlimitFound ?? undefined;
}

/** The dirs holding the engine's own modules a child loads, and the import map (read-only
 *  in its view). */
export function engineDirs(repo: string, packageDirs: readonly string[], importMap: string): string[] {
  return [join(repo, 'sdk'), join(repo, 'runner'), join(repo, 'src'), ...packageDirs, importMap].filter((d) => existsSync(d));
}
