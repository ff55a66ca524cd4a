// A throwaway PostgreSQL server for the DBOS peer rows (bench/lib/peers.ts): initdb into a
// temp dir, the postmaster spawned directly (its PID is ours to stop), listening on
// 127.0.0.1 only on a free port, durability as shipped (fsync=on, synchronous_commit=on,
// full_page_writes=on) and stated in the output. Stopped by PID (SIGINT: fast shutdown).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const PG_SETTINGS = { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on', wal_sync_method: 'fdatasync' } as const;

export interface PgBin { bindir: string; version: string }

const executable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Where initdb and postgres are: $PG_BINDIR if set (only there), else PATH, else Debian's
 *  /usr/lib/postgresql/<major>/bin (the newest). A string says why not, in one line. */
export function findPostgres(env: NodeJS.ProcessEnv = process.env): PgBin | string {
  const has = (d: string) => executable(join(d, 'initdb')) && executable(join(d, 'postgres'));
  let dirs: string[];
  if (env.PG_BINDIR) dirs = [env.PG_BINDIR];
  else {
    dirs = (env.PATH ?? '').split(':').filter(Boolean);
    const deb = '/usr/lib/postgresql';
    if (existsSync(deb)) dirs.push(...readdirSync(deb).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)).map((v) => join(deb, v, 'bin')));
  }
  const bindir = dirs.find(has);
  if (!bindir) {
    return env.PG_BINDIR
      ? `PostgreSQL's initdb and postgres are not in PG_BINDIR=${env.PG_BINDIR}`
      : "PostgreSQL's initdb and postgres are not on PATH nor in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)";
  }
  const version = execFileSync(join(bindir, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  return { bindir, version };
}

/** postgres refuses to run as root: as root, the server runs as the 'postgres' user. */
function runAs(): { uid: number; gid: number } | string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) return "the bench runs as root, postgres refuses to, and there is no 'postgres' user to run it as";
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Postgres {
  pid: number;
  port: number;
  version: string;
  /** A connection URL for database `db` (DBOS creates its system database when missing). */
  url(db: string): string;
  stop(): Promise<void>;
}

/** Starts a server in a fresh directory under the system temp dir (not the bench's own temp
 *  root: as root, the server's user must be able to reach it), removed by stop(). */
export async function startPostgres(bin: PgBin, log: (s: string) => void): Promise<Postgres> {
  const as = runAs();
  if (typeof as === 'string') throw new Error(as);
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-pg-'));
  const data = join(dir, 'data');
  mkdirSync(data, { recursive: true });
  if (as) {
    chownSync(dir, as.uid, as.gid);
    chownSync(data, as.uid, as.gid);
  }
  const opts = { ...(as ?? {}), cwd: dir, env: { ...process.env, LC_ALL: 'C' } };
  // --no-sync: initdb's own files are set-up, not a measured write; the server below fsyncs.
  try {
    execFileSync(join(bin.bindir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'], { ...opts, stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const why = String((err as { stderr?: Buffer }).stderr ?? '').trim().split('\n').filter(Boolean).pop();
    throw new Error(`initdb failed: ${why ?? (err as Error).message.split('\n')[0]}`);
  }
  const port = await freePort();
  const args = ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${data}`, '-c', 'max_connections=200'];
  for (const [k, v] of Object.entries(PG_SETTINGS)) args.push('-c', `${k}=${v}`);
  const child: ChildProcess = spawn(join(bin.bindir, 'postgres'), args, { ...opts, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`postgres not ready within 60 s: ${err.slice(-300)}`)), 60_000);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err = (err + d).slice(-4000);
      if (err.includes('ready to accept connections')) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`postgres exited (${code}) before it was ready: ${err.trim().split('\n').slice(-2).join(' | ')}`));
    });
  }).catch((e: unknown) => {
    try { process.kill(child.pid!, 'SIGKILL'); } catch { /* gone */ }
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  const pid = child.pid!;
  // If the bench exits without stop() (Ctrl-C, a crash), the server still gets its fast shutdown.
  const onExit = () => { try { process.kill(pid, 'SIGINT'); } catch { /* gone */ } };
  process.once('exit', onExit);
  log(`postgres: ${bin.version} (${bin.bindir}) pid ${pid} on 127.0.0.1:${port}, ${Object.entries(PG_SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ')}, data ${data}`);
  return {
    pid,
    port,
    version: bin.version,
    url: (db) => `postgresql://postgres@127.0.0.1:${port}/${db}`,
    async stop() {
      process.off('exit', onExit);
      if (child.exitCode !== null || child.signalCode !== null) return rmSync(dir, { recursive: true, force: true });
      // SIGINT is postgres's fast shutdown (backends end, a checkpoint, exit); SIGQUIT and
      // then SIGKILL only if it does not end in time. By PID only.
      const sig = (s: NodeJS.Signals) => { try { process.kill(pid, s); } catch { /* gone */ } };
      sig('SIGINT');
      const t1 = setTimeout(() => sig('SIGQUIT'), 15_000);
      const t2 = setTimeout(() => sig('SIGKILL'), 25_000);
      await exited;
      clearTimeout(t1);
      clearTimeout(t2);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
