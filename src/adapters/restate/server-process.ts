// The embedded restate-server: started from the pinned npm package when no Restate URLs are
// configured. Loopback only (--bind-ip 127.0.0.1), free ports remembered in the data dir so
// URLs stay stable, data under <dataDir>/restate, stopped by PID. "Ready" means the admin SQL
// endpoint answers (health answers long before an invocation can run). Its temp dir is
// <dataDir>/restate/tmp, not the system one: each partition's invoker makes an
// invoker-<ulid> dir there at every start and never removes it, so the engine empties it
// when it stops the server and before it starts one (leftovers of a crashed server).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { StorageError } from '../../domain/errors.ts';
import { pidAlive, signalPid as signal } from '../../platform/pid.ts';
import { freePort, httpJson, portFree } from './http-json.ts';
import { ensureRequestIdentity } from './request-identity.ts';

export interface RestatePorts {
  ingress: number;
  admin: number;
  node: number;
}

const READY_TIMEOUT_MS = 60_000;

/** Where a running embedded server's admin API listens, for readers in other processes (the
 *  CLI): written once the server is ready, removed when the engine stops it. A server left
 *  running by a SIGKILLed engine keeps its file (it still answers; the next engine adopts it). */
export const ADMIN_FILE = 'admin.json';

export interface AdminFile {
  adminUrl: string;
  pid: number;
}

/** The admin address recorded in `<dataDir>/restate`, if a server was started there. */
export function readAdminFile(dataDir: string): AdminFile | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dataDir, 'restate', ADMIN_FILE), 'utf8')) as Partial<AdminFile>;
    return typeof v.adminUrl === 'string' && Number.isInteger(v.pid) ? { adminUrl: v.adminUrl, pid: v.pid! } : undefined;
  } catch {
    return undefined;
  }
}

function binaryPath(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@restatedev/restate-server-${process.platform}-${process.arch}`;
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'restate-server');
  } catch {
    throw new StorageError(`restate-server binary for ${process.platform}-${process.arch} is not installed (${pkg}); run npm install`);
  }
}



/** True when pid is a restate-server we started on this base dir (guards against PID reuse). */
function isOurServer(pid: number, baseDir: string): boolean {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmd.some((a) => a.endsWith('restate-server')) && cmd.includes(baseDir);
  } catch {
    return false;
  }
}

export class RestateServer {
  private child: ChildProcess | undefined;
  private adoptedPid: number | undefined;
  private stopping = false;
  ports!: RestatePorts;
  /** The public key the endpoint checks request signatures against. */
  identityKey = '';
  /** Called when a server this object spawned exits without being asked to. */
  onUnexpectedExit: (() => void) | undefined;

  /** `tracingEndpoint`: the server's OTLP endpoint for its invocation spans (config
   *  restate.tracingEndpoint); absent: RESTATE_TRACING_ENDPOINT of the environment, if any. */
  constructor(
    private readonly dataDir: string,
    private readonly opts: { tracingEndpoint?: string } = {},
  ) {}

  get baseDir(): string {
    return join(this.dataDir, 'restate');
  }
  /** The server's TMPDIR. Not worker.invoker.tmp-dir: that one dir would be shared by every
   *  partition's invoker, where TMPDIR gives each its own invoker-<ulid> dir, as upstream intends. */
  get tmpDir(): string {
    return join(this.baseDir, 'tmp');
  }
  get ingressUrl(): string {
    return `http://127.0.0.1:${this.ports.ingress}`;
  }
  get adminUrl(): string {
    return `http://127.0.0.1:${this.ports.admin}`;
  }
  get pid(): number | undefined {
    return this.child?.pid ?? this.adoptedPid;
  }

  async start(): Promise<void> {
    mkdirSync(this.baseDir, { recursive: true, mode: 0o700 });
    const identity = ensureRequestIdentity(this.baseDir);
    this.identityKey = identity.publicKey;
    const pidFile = join(this.baseDir, 'server.pid');
    const portsFile = join(this.baseDir, 'ports.json');
    const saved = existsSync(portsFile) ? (JSON.parse(readFileSync(portsFile, 'utf8')) as RestatePorts) : undefined;
    // A server left running by an engine process that died: adopt it rather than start a
    // second one on the same store (its storage lock would refuse us anyway).
    const oldPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined;
    if (saved && oldPid && pidAlive(oldPid) && isOurServer(oldPid, this.baseDir)) {
      this.ports = saved;
      this.adoptedPid = oldPid;
      await this.waitReady(() => undefined);
      this.writeAdminFile();
      return;
    }
    this.ports = saved && (await Promise.all([saved.ingress, saved.admin, saved.node].map(portFree))).every(Boolean)
      ? saved
      : { ingress: await freePort(), admin: await freePort(), node: await freePort() };
    writeFileSync(portsFile, JSON.stringify(this.ports), { mode: 0o600 });
    // No server runs on this dir now: what is in its temp dir was left by one that crashed.
    this.emptyTmpDir();
    const logFd = openSync(join(this.baseDir, 'server.log'), 'a', 0o600);
    this.child = spawn(
      binaryPath(),
      ['--base-dir', this.baseDir, '--node-name', 'tranquil', '--bind-ip', '127.0.0.1', '--bind-port', String(this.ports.node), '--listen-mode', 'tcp', '--no-logo'],
      {
        stdio: ['ignore', logFd, logFd],
        env: {
          ...process.env,
          TMPDIR: this.tmpDir,
          RESTATE_INGRESS__BIND_PORT: String(this.ports.ingress),
          RESTATE_ADMIN__BIND_PORT: String(this.ports.admin),
          // 4 partitions instead of 24: half the cold start and ~90 MiB less memory on one machine.
          RESTATE_DEFAULT_NUM_PARTITIONS: process.env.TRANQUIL_RESTATE_PARTITIONS ?? '4',
          RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: identity.privateKeyFile,
          RESTATE_DISABLE_TELEMETRY: 'true',
          RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
          DO_NOT_TRACK: '1',
          ...(this.opts.tracingEndpoint ? { RESTATE_TRACING_ENDPOINT: this.opts.tracingEndpoint } : {}),
        },
      },
    );
    closeSync(logFd);
    writeFileSync(pidFile, String(this.child.pid), { mode: 0o600 });
    this.stopping = false;
    const spawned = this.child;
    spawned.once('exit', () => {
      process.off('exit', this.killOnExit);
      if (!this.stopping && this.child === spawned) this.onUnexpectedExit?.();
    });
    // A process that exits without engine.stop() (process.exit, a fatal error) takes its
    // server with it. Only SIGKILL of the engine leaves it running, for the next engine on
    // this data dir to adopt, so runs in flight keep going.
    process.once('exit', this.killOnExit);
    const exited = () => (this.child && (this.child.exitCode !== null || this.child.signalCode !== null) ? this.child : undefined);
    await this.waitReady(() => {
      const c = exited();
      if (c) throw new StorageError(`restate-server exited at start (code ${c.exitCode}, signal ${c.signalCode}); see ${join(this.baseDir, 'server.log')}`);
    });
    this.writeAdminFile();
  }

  private writeAdminFile(): void {
    const file = join(this.baseDir, ADMIN_FILE);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ adminUrl: this.adminUrl, pid: this.pid } satisfies Partial<AdminFile>), { mode: 0o600 });
    renameSync(tmp, file);
  }

  private async waitReady(checkAlive: () => void): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      checkAlive();
      try {
        const r = await httpJson('POST', `${this.adminUrl}/query`, { query: 'SELECT count(*) AS n FROM sys_invocation' }, { timeoutMs: 2000 });
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new StorageError(`restate-server did not become ready within ${READY_TIMEOUT_MS / 1000}s; see ${join(this.baseDir, 'server.log')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Removes what a server that is no longer running left in its temp dir; keeps the dir. */
  private emptyTmpDir(): void {
    mkdirSync(this.tmpDir, { recursive: true, mode: 0o700 });
    for (const entry of readdirSync(this.tmpDir)) rmSync(join(this.tmpDir, entry), { recursive: true, force: true });
  }

  private readonly killOnExit = (): void => {
    if (this.child?.pid) signal(this.child.pid, 'SIGKILL');
  };

  /** SIGTERM by PID, SIGKILL after a bound; then empties its temp dir. */
  async stop(boundMs = 10_000): Promise<void> {
    this.stopping = true;
    process.off('exit', this.killOnExit);
    rmSync(join(this.baseDir, ADMIN_FILE), { force: true });
    const pid = this.pid;
    if (pid && pidAlive(pid)) await this.terminate(pid, boundMs);
    this.child = undefined;
    this.adoptedPid = undefined;
    if ((!pid || !pidAlive(pid)) && existsSync(this.tmpDir)) this.emptyTmpDir();
  }

  private async terminate(pid: number, boundMs: number): Promise<void> {
    const gone = this.child
      ? new Promise<void>((r) => (this.child!.exitCode !== null || this.child!.signalCode !== null ? r() : this.child!.once('exit', () => r())))
      : (async () => {
          while (pidAlive(pid)) await new Promise((r) => setTimeout(r, 20));
        })();
    if (!signal(pid, 'SIGTERM')) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([gone.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), boundMs)))]);
    clearTimeout(timer);
    if (timedOut && signal(pid, 'SIGKILL')) await gone;
  }
}
