// Child processes of the harness: spawned with the tsx loader (spawnTs) or, for the figures
// that describe a production deployment, as the compiled build under plain node
// (spawnCompiled); tracked and stopped by PID only.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { processTree } from './proc-mem.ts';

export const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const live = new Set<ChildProcess>();

let built = false;
/**
 * Builds dist/ and the bench children that import it (bench/.build/), once per process:
 * `node scripts/build.mjs --bench`, well under a second, so every bench measures the
 * current sources.
 */
export function ensureCompiled(): void {
  if (built) return;
  execFileSync(process.execPath, [`${REPO}/scripts/build.mjs`, '--bench', '--js'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
  built = true;
}

/** The compiled form of a bench child script (bench/x.ts -> bench/.build/x.js), built on first use. */
export function compiledChild(script: string): string {
  ensureCompiled();
  return `${REPO}/bench/.build/${script.replace(/\.ts$/, '.js')}`;
}

export interface Spawned {
  child: ChildProcess;
  /** Resolves with each JSON line the child prints. */
  nextJson(timeoutMs: number): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  stderrTail(): string;
}

export function spawnTs(script: string, args: unknown, nodeFlags: string[] = [], echoStderr = false): Spawned {
  return spawnNode(script, [...nodeFlags, '--import', 'tsx', `${REPO}/bench/${script}`], args, echoStderr);
}

/** The same child from the production build (dist/, bundled by scripts/build.mjs), plain node. */
export function spawnCompiled(script: string, args: unknown, nodeFlags: string[] = []): Spawned {
  return spawnNode(script, [...nodeFlags, compiledChild(script)], args);
}

/** A plain JavaScript child under plain node (no loader, no build): the peer rows' children. */
export function spawnPlain(path: string, args: unknown, env: NodeJS.ProcessEnv = {}): Spawned {
  return spawnNode(path, [path], args, false, env);
}

function spawnNode(script: string, argv: string[], args: unknown, echoStderr = false, env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(process.execPath, [...argv, JSON.stringify(args)], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  live.add(child);
  let buf = '';
  let err = '';
  const lines: string[] = [];
  const waiting: ((l: string | null) => void)[] = [];
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiting.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    if (echoStderr) process.stderr.write(d);
    err = (err + d).slice(-4000);
  });
  const exited = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      live.delete(child);
      for (const w of waiting.splice(0)) w(null);
      r(code);
    }),
  );
  return {
    child,
    exited,
    stderrTail: () => err.trim().split('\n').slice(-3).join(' | '),
    nextJson(timeoutMs) {
      return new Promise((resolve, reject) => {
        const got = (line: string | null) => {
          clearTimeout(t);
          if (line === null) return reject(new Error(`${script} exited without output: ${err.trim().split('\n').slice(-3).join(' | ')}`));
          try {
            resolve(JSON.parse(line) as Record<string, unknown>);
          } catch {
            reject(new Error(`${script}: not JSON: ${line.slice(0, 200)}`));
          }
        };
        const t = setTimeout(() => {
          const i = waiting.indexOf(got);
          if (i >= 0) waiting.splice(i, 1);
          reject(new Error(`${script}: no output within ${timeoutMs} ms`));
        }, timeoutMs);
        const l = lines.shift();
        if (l !== undefined) got(l);
        else waiting.push(got);
      });
    },
  };
}

/** SIGTERM, then SIGKILL after boundMs; by PID only. Descendants that outlive the child
 *  (a restate-server whose engine was SIGKILLed before it could stop it) are stopped the
 *  same way, by the PIDs recorded before the child was signalled. */
export async function stopChild(s: Spawned, boundMs = 5000): Promise<void> {
  const c = s.child;
  if (c.exitCode !== null || c.signalCode !== null || c.pid === undefined) return;
  const descendants = processTree(c.pid).filter((p) => p !== c.pid).map((pid) => ({ pid, cmd: cmdline(pid) }));
  try {
    process.kill(c.pid, 'SIGTERM');
  } catch {
    return;
  }
  const t = setTimeout(() => {
    try {
      if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
    } catch { /* gone */ }
  }, boundMs);
  await s.exited;
  clearTimeout(t);
  // Only a PID that still runs the same command line: never a recycled one.
  const left = () => descendants.filter((d) => d.cmd && cmdline(d.pid) === d.cmd);
  for (const d of left()) signal(d.pid, 'SIGTERM');
  for (let waited = 0; left().length > 0 && waited < 10_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  for (const d of left()) signal(d.pid, 'SIGKILL');
}

function cmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch { /* gone */ }
}

/** Stops every child still alive (used on exit paths). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all(
    [...live].map((c) =>
      new Promise<void>((r) => {
        try {
          if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
        } catch { /* gone */ }
        c.once('exit', () => r());
        setTimeout(r, 2000);
      }),
    ),
  );
}

/** Runs a child to completion and returns its JSON line (bounded). */
export async function runChild(script: string, args: unknown, timeoutMs: number, nodeFlags: string[] = [], echoStderr = false): Promise<Record<string, unknown>> {
  const s = spawnTs(script, args, nodeFlags, echoStderr);
  try {
    const out = await s.nextJson(timeoutMs);
    await Promise.race([s.exited, new Promise((r) => setTimeout(r, 5000))]);
    return out;
  } finally {
    await stopChild(s);
  }
}
