// The Deno runner: describes workflow files (in a child with no permission) and runs each
// execution of a file's run in its own Deno child, whose flags come only from the file's
// declaration (src/domain/permissions.ts) plus the engine's loopback port. The child drives
// the shared RunSession; this side serves it the run's step log (serveStepLog).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Socket } from 'node:net';
import { ValidationError } from '../../domain/errors.ts';
import { denoFlags, describeFlags, grantedPaths, moduleFlags, RUNNER_TOKEN_ENV, type Permissions } from '../../domain/permissions.ts';
import { ProtocolError } from '../../domain/runner-protocol.ts';
import { parseOrThrow } from '../../domain/validate.ts';
import type { Logger, MessageLevel } from '../../ports/logger.ts';
import type { AttemptResult, StepLog } from '../../ports/step-log.ts';
import type { FileDescription, RegisteredWorkflow } from '../../runtime/registry.ts';
import type { RunOutcome } from '../../runtime/run-outcome.ts';
import type { Session, SessionOptions } from '../../runtime/session-factory.ts';
import { findDeno } from './binary.ts';
import { DenoChild } from './child-process.ts';
import { findSnapshot, takeSnapshot, versionOf, writeImportMap, childPackageDirs, type Snapshot } from './snapshot.ts';
import { checkModuleGraph, type GraphContext } from './module-graph.ts';
import { toErrorInfo, type ErrorInfo } from '../../domain/errors.ts';
import { UnusedGrants } from './unused-grants.ts';
import { serveStepLog, type Watch } from './step-log-server.ts';
import { ChildObserver } from './child-observer.ts';
import { StepListener } from './step-listener.ts';
import { childCommand, confinementLine, DEFAULT_CHILD_MAX_FILE_BYTES, DEFAULT_CHILD_MAX_WRITE_BYTES, DEFAULT_CHILD_MEMORY_MIB, detectConfinement, engineDirs, type ChildView, type Confinement } from './confine.ts';
import { packageRoot } from './package-root.ts';
import { FileSchemaChecks } from './schema-checks.ts';
import { checkTriggers, declaredQueues, DESCRIPTION, descriptionSchema, fileDescription, type Description, type RemoteSchemas } from './description.ts';
import type { QueueDefinition } from '../../../sdk/queue.ts';

/** Every child's first module (runner/prelude.ts: no Node-compat globals). */
const PRELUDE = `--preload=${join(packageRoot(), 'runner', 'prelude.ts')}`;
import { checkGrants, grantPaths, type Protected } from './grant-check.ts';
import type { GrantPaths } from '../../domain/approval.ts';
import { blockWebStorage, crashReason, errorLine, lastLine } from './child-endings.ts';
import { join } from 'node:path';

export interface DenoRunnerOptions {
  dataDir: string;
  /** Config deno.binary: another deno to spawn; default the locked npm package's binary. */
  binary?: string;
  maxPayloadBytes: number;
  /** How long a child may take to exit after sending its outcome before it is killed. */
  exitGraceMs?: number;
  /** The watchdog (config deno.*): heartbeat interval and timeout, ms. */
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
  /** A warm child waits this long for the next execution of its version (ms, default
   *  30000; 0: no warm children, every execution spawns and loads its own). */
  warmIdleMs?: number;
  /** Where the children's `log` frames go (the engine's logger); absent: dropped. */
  logger?: Logger;
  /** Config deno.sandbox: 'auto' (default) confines children with bubblewrap where it
   *  works; 'off' does not (the other layers hold alone). */
  sandbox?: 'auto' | 'off';
  /** Config deno.memory: a run child's memory cap in MiB (default DEFAULT_CHILD_MEMORY_MIB). */
  memoryMiB?: number;
  /** Config deno.maxFileBytes: the largest file a child may write (bytes, default
   *  DEFAULT_CHILD_MAX_FILE_BYTES), through RLIMIT_FSIZE. */
  maxFileBytes?: number;
  /** Config deno.maxWriteBytes: what a run's children may write to storage in total (bytes,
   *  default DEFAULT_CHILD_MAX_WRITE_BYTES), per run in this process; Linux only. */
  maxWriteBytes?: number;
  /** Config deno.describeTimeout: how long describing a file may take (ms, default 30000). */
  describeTimeoutMs?: number;
  /** Paths no declaration may grant, besides the data dir (the key file, the config file). */
  protect?: readonly Protected[];
  /** Tests only: skip the module graph check, to show the OS sandbox alone holds. */
  unsafeSkipGraphCheckForTests?: boolean;
}

export const DEFAULT_DESCRIBE_TIMEOUT_MS = 30_000;

export const DEFAULT_HEARTBEAT_MS = 1_000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;
/** Past a step's own timeout before the engine kills a child that did not report it. */
const STEP_TIMEOUT_SLACK_MS = 1_000;
/** After a cancel's grace, before a child that has not ended is killed. */
const CANCEL_KILL_MS = 2_000;
/** A child that has not connected by then is killed (the token expires unclaimed anyway).
 *  Generous: on a machine loaded far past its cores a Deno start took over 15 s. */
const CONNECT_TIMEOUT_MS = 60_000;

/** What a run child may write even when its run's write bound is used up: Deno's own cache
 *  writes while it loads (measured: 86 KB for a first load) stay under it. */
const LOAD_WRITE_BYTES = 1024 * 1024;

/** How long a warm child waits for the next execution of its version before it is killed. */
export const DEFAULT_WARM_IDLE_MS = 30_000;
/** Versions kept warm at once (one child each). */
const MAX_WARM = 8;

/** What a run child is spawned with: the snapshot, its version's declaration, the bounds. */
interface ChildSpec {
  runEntry: string;
  dir: string;
  permissions: Permissions;
  baseDir: string;
  maxPayloadBytes: number;
}

interface Spawned {
  child: DenoChild;
  connected: Promise<Socket>;
  claimant: (s: Socket) => void;
}

/** What a finished child left: its output, kept per run (bounded) for `runs describe`. */
export interface ChildRecord {
  pid: number;
  connected?: boolean;
  exit?: { code: number | null; signal: string | null };
  stdout: string;
  stderr: string;
}

export class DenoRunner {
  readonly binary: string;
  readonly listener = new StepListener();
  private importMap = '';
  private readonly denoDir: string;
  /** The last child of each run (bounded by the number of runs this process executed). */
  readonly children = new Map<string, ChildRecord>();
  /** Children alive now: the engine stopping kills them by PID (they must not outlive it). */
  private readonly live = new Set<DenoChild>();
  /** Loaded, authenticated children waiting for the next execution of a version (by key). */
  private readonly warm = new Map<string, Spawned & { timer: NodeJS.Timeout }>();
  private closed = false;
  /** Versions whose module graph was checked in this process (snapshots are immutable). */
  private readonly checkedGraphs = new Map<string, Promise<void>>();
  /** Kills the `deno info` processes of graph checks in flight when the runner closes. */
  private readonly closing = new AbortController();
  /** Per run: failed attempts of children the watchdog killed, for the run's next child. */
  private readonly verdicts = new Map<string, Map<string, AttemptResult>>();
  /** Per run: bytes its ended children wrote to storage, until an execution ends it (a run
   *  that suspends or retries gets no new budget with its next child). */
  private readonly runWrites = new Map<string, number>();
  /** Per version of a file: its slot grants that went unused (unused-grants.ts). */
  private readonly unusedGrants = new Map<string, UnusedGrants>();

  /** How children are confined here (bubblewrap, or why not). */
  readonly confinement: Confinement;

  /** The check children that run a file's schemas at the engine's boundaries. */
  private readonly checks: FileSchemaChecks;

  constructor(private readonly o: DenoRunnerOptions) {
    this.checks = new FileSchemaChecks((v, onLine) => this.spawnCheckChild(v, onLine), { timeoutMs: o.describeTimeoutMs ?? DEFAULT_DESCRIBE_TIMEOUT_MS, idleMs: o.warmIdleMs || DEFAULT_WARM_IDLE_MS });
    this.binary = findDeno(o.binary);
    this.denoDir = join(o.dataDir, 'runner', 'deno-dir');
    this.confinement = detectConfinement(o.sandbox);
  }

  /** What a child sees under the OS sandbox: the engine's files, its snapshot, its grants. */
  private view(snapDir: string, read: readonly string[] = [], write: readonly string[] = [], net = false): ChildView {
    return { binary: this.binary, denoDir: this.denoDir, snapshotDir: snapDir, engine: engineDirs(packageRoot(), childPackageDirs(), this.importMap), read, write, net };
  }

  /** What describing needs (DENO_DIR, the import map); start() also listens for run children. */
  prepare(): void {
    // Owner-only from the first mkdir (the data dir itself too, when the runner makes it first).
    mkdirSync(this.denoDir, { recursive: true, mode: 0o700 });
    blockWebStorage(this.denoDir);
    this.importMap = writeImportMap(this.o.dataDir);
  }

  async start(): Promise<void> {
    this.prepare();
    // Said once: without the OS sandbox, the graph check, the snapshot and Deno's own
    // permissions are what holds (docs/runner.md, Threat model).
    if (this.confinement.kind === 'none' && this.o.logger?.enabled('warn')) this.o.logger.log('warn', confinementLine(this.confinement));
    await this.listener.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    this.checks.close();
    for (const w of this.warm.values()) clearTimeout(w.timer);
    this.warm.clear();
    const dying = [...this.live].map((child) => (child.kill(), child.exited));
    await this.listener.close();
    // Gone before the caller may remove the data dir (a child writes DENO_DIR until then).
    await Promise.race([Promise.all(dying), new Promise((r) => setTimeout(r, 3_000).unref())]);
  }

  /** Describes a workflow file without importing it here: its snapshot's describe entry runs
   *  in a child with no permission, which prints name, triggers, defaults and declaration. */
  async describe(path: string): Promise<FileDescription> {
    const file = resolve(path);
    const snap = takeSnapshot(this.o.dataDir, file);
    await this.checkGraph(snap, `workflow file ${file}`);
    // A description stored before schemas or the run timeout were described is made again.
    const stored = this.storedDescription(snap.digest);
    const known = stored?.schemas && stored.timeoutMs !== undefined && stored.queues !== undefined ? stored : undefined;
    if (known) checkGrants(file, known.permissions, dirname(file), this.guarded());
    if (known) return fileDescription(known, snap.digest, file, this.remote(snap.digest, file));
    const cmd = childCommand(this.confinement, this.view(snap.dir), ['run', `--v8-flags=--max-old-space-size=${this.memoryMiB()}`, PRELUDE, ...describeFlags(this.importMap), snap.describeEntry], this.memoryMiB(), this.maxFileBytes());
    const child = new DenoChild(cmd.file, cmd.args, this.env({}), snap.dir, cmd.infoFd);
    child.boundWrites(this.maxWriteBytes());
    this.live.add(child); // killed too if the engine stops meanwhile
    void child.exited.then(() => this.live.delete(child));
    // Top-level code that never ends must not hang start, trigger or validate (issue 36 #7).
    const limitMs = this.o.describeTimeoutMs ?? DEFAULT_DESCRIBE_TIMEOUT_MS;
    let spun = false;
    const limit = setTimeout(() => ((spun = true), child.kill()), limitMs);
    const exit = await child.exited.finally(() => clearTimeout(limit));
    if (spun) throw new ValidationError(`workflow file ${file}: could not be described: its top-level code did not finish within ${limitMs}ms and was killed (config deno.describeTimeout)`);
    if (child.overWritten) throw new ValidationError(`workflow file ${file}: could not be described: it wrote ${child.written} bytes to disk, past the bound of ${this.maxWriteBytes()} bytes (config deno.maxWriteBytes), and was killed`);
    if (exit.code !== 0) throw new ValidationError(`workflow file ${file}: could not be described (exit ${exit.code ?? exit.signal}): ${errorLine(child.stderr)}`);
    let raw: unknown;
    try {
      raw = JSON.parse(child.stdout.trim().split('\n').pop() ?? '');
    } catch {
      throw new ValidationError(`workflow file ${file}: its description is not JSON`);
    }
    const d = checkTriggers(parseOrThrow(descriptionSchema, raw, `workflow file ${file}`), file);
    checkGrants(file, d.permissions, dirname(file), this.guarded());
    // Kept with the snapshot: the declaration a run of this version executes with, also
    // after a restart that registers a newer version of the file.
    writeFileSync(join(snap.dir, DESCRIPTION), `${JSON.stringify(d)}\n`, { mode: 0o600 });
    return fileDescription(d, snap.digest, file, this.remote(snap.digest, file));
  }

  /** The schemas of `file` at `version`, each run by its check child. */
  private remote(version: string, file: string): RemoteSchemas {
    return (at, name) => this.checks.schema(version, file, at, name);
  }

  /** The check child of a version: the describe entry with `check`, as permissionless as a
   *  describe, reading check requests on its stdin (runner/schema-check.ts). */
  private spawnCheckChild(version: string, onLine: (line: string) => void): DenoChild {
    const snap = findSnapshot(this.o.dataDir, version);
    if (!snap) throw new ValidationError(`the snapshot of version ${version} is missing: its schemas cannot be checked`);
    const cmd = childCommand(this.confinement, this.view(snap.dir), ['run', `--v8-flags=--max-old-space-size=${this.memoryMiB()}`, PRELUDE, ...describeFlags(this.importMap), snap.describeEntry, 'check'], this.memoryMiB(), this.maxFileBytes());
    const child = new DenoChild(cmd.file, cmd.args, this.env({}), snap.dir, cmd.infoFd, { stdin: true, onLine });
    this.live.add(child);
    void child.exited.then(() => this.live.delete(child));
    return child;
  }

  /** The description stored with a version's snapshot (name, triggers, declaration). */
  described(version: string): { name: string; triggers: unknown[]; permissions: Permissions } | undefined {
    return this.storedDescription(version);
  }

  /** The version of the file on disk now, with its local imports (its next run's version);
   *  reads the files, starts no child. */
  digestOf(path: string): string {
    return versionOf(path);
  }

  /** The declaration recorded with a version's snapshot (written when it was described). */
  declarationOf(version: string): Permissions | undefined {
    return this.storedDescription(version)?.permissions;
  }

  /** The queues recorded with a version's snapshot (an older version's run: its own). */
  private queuesOf(version: string, file: string): QueueDefinition[] {
    const d = this.storedDescription(version);
    return d ? declaredQueues(d, file) : [];
  }

  /** Where each path grant leads (shown with a blocked run: FileDescriber.grantPaths). */
  grantPaths(file: string, declarations: readonly (Permissions | undefined)[]): GrantPaths {
    return grantPaths(dirname(file), declarations);
  }

  private storedDescription(version: string): Description | undefined {
    const snap = findSnapshot(this.o.dataDir, version);
    if (!snap) return undefined;
    try {
      const d = descriptionSchema.safeParse(JSON.parse(readFileSync(join(snap.dir, DESCRIPTION), 'utf8')));
      return d.success ? d.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** One execution of a file's run, in a fresh child running the snapshot of `version`. */
  session(log: StepLog, wf: RegisteredWorkflow, version: string, o: SessionOptions): Session {
    const self = this;
    const state = { cancelDelivered: false };
    return {
      get cancelDelivered() {
        return state.cancelDelivered;
      },
      get output() {
        const c = self.children.get(log.runId);
        if (!c) return undefined;
        return { pid: c.pid, exit: c.exit && (c.exit.signal ? `signal ${c.exit.signal}` : `code ${c.exit.code}`), stdout: c.stdout, stderr: c.stderr };
      },
      get connected() {
        return self.children.get(log.runId)?.connected === true;
      },
      async run(): Promise<RunOutcome> {
        const served = await self.execute(log, wf, version, o);
        state.cancelDelivered = served.cancelDelivered;
        return served.outcome;
      },
    };
  }

  private async execute(log: StepLog, wf: RegisteredWorkflow, version: string, o: SessionOptions) {
    const file = wf.file!;
    let snap = findSnapshot(this.o.dataDir, version);
    if (!snap && version === file.digest) {
      // Its snapshot was removed meanwhile: only the files on disk with that same version do.
      const again = takeSnapshot(this.o.dataDir, file.path);
      if (again.digest === version) snap = again;
    }
    if (!snap) throw new ValidationError(`run ${log.runId}: the snapshot of version ${version} of '${wf.definition.name}' is missing`);
    try {
      await this.checkGraph(snap, `run ${log.runId} of workflow file ${file.path}`);
    } catch (err) {
      if (this.closed) throw err; // the engine stops: its check was cut, not refused
      // Refused for good: the same snapshot is refused again on every retry.
      return { outcome: { type: 'failed', error: toErrorInfo(err) as ErrorInfo } as RunOutcome, cancelDelivered: false };
    }
    const maxPayloadBytes = o.maxPayloadBytes ?? this.o.maxPayloadBytes;
    // The declaration recorded with THIS version (the gate let the run through only if it
    // is an approved one), never the live file's.
    const permissions = (version === file.digest ? file.permissions : this.declarationOf(version)) ?? {};
    const spec: ChildSpec = { runEntry: snap.runEntry, dir: snap.dir, permissions, baseDir: dirname(file.path), maxPayloadBytes };
    // The queues THIS version declares: the only ones its steps' slot frames may name.
    const queues = new Map((version === file.digest ? wf.definition.queues ?? [] : this.queuesOf(version, file.path)).map((q) => [q.name, q] as const));
    const key = `${version}\0${file.path}\0${maxPayloadBytes}`;
    // A warm child of this version (spawned with these same flags, already loaded and
    // authenticated) saves the spawn and module load; else a cold one.
    const { child, connected, claimant } = this.takeWarm(key) ?? this.spawn(spec);
    const record: ChildRecord = { pid: child.pid, stdout: '', stderr: '' };
    this.children.set(log.runId, record);
    // The run's budget left: what its earlier children wrote counts (docs/runner.md, layer 5).
    const wroteBefore = this.runWrites.get(log.runId) ?? 0;
    // At least LOAD_WRITE_BYTES: Deno's own cache writes while loading count too, and a run
    // past its bound then fails in the step that writes more, by its retry policy.
    child.boundWrites(Math.max(LOAD_WRITE_BYTES, this.maxWriteBytes() - wroteBefore), wroteBefore);
    let runEnded = false;
    const died = child.exited.then((exit) => {
      throw new ProtocolError(`the run child of ${log.runId} (pid ${child.pid}) exited (${exit.code ?? exit.signal}) before its outcome: ${lastLine(child.stderr)}`);
    });
    // Ended by itself (not killed from outside, not by the engine): a crash, with its reason.
    const crashed = child.exited.then((exit) => (this.closed ? new Promise<string>(() => {}) : crashReason(exit, child, log.runId, this.memoryMiB(), this.maxFileBytes(), this.maxWriteBytes()) ?? new Promise<string>(() => {})));
    let connectTimer: NodeJS.Timeout | undefined;
    const noConnect = new Promise<never>((_, reject) => {
      connectTimer = setTimeout(() => (child.kill(), reject(new ProtocolError(`the run child of ${log.runId} (pid ${child.pid}) did not connect within ${CONNECT_TIMEOUT_MS}ms and was killed`))), CONNECT_TIMEOUT_MS);
    });
    noConnect.catch(() => {});
    const verdicts = this.verdicts.get(log.runId) ?? new Map<string, AttemptResult>();
    this.verdicts.set(log.runId, verdicts);
    const watch: Watch = {
      heartbeatMs: this.o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS, heartbeatTimeoutMs: this.o.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
      stepTimeoutSlackMs: STEP_TIMEOUT_SLACK_MS, cancelKillMs: CANCEL_KILL_MS, verdicts, kill: () => child.kill(),
    };
    try {
      const socket = await Promise.race([connected, died, noConnect]);
      clearTimeout(connectTimer);
      record.pid = child.pid; // deno's own under bwrap (known by the time it connected)
      record.connected = true;
      const onLog = (level: string, message: string) => {
        const logger = this.o.logger;
        // Attributed: the message is the child's (workflow code's), not the engine's own.
        if (logger?.enabled(level as MessageLevel)) logger.log(level as MessageLevel, `workflow '${wf.definition.name}' run ${log.runId} (child pid ${child.pid}): ${message}`);
      };
      // serveStepLog tells a crash from a kill first (it fails the attempt); `died` is the backstop.
      const diedLate = died.catch((e: unknown) => new Promise<never>((_, reject) => setTimeout(() => reject(e), 3_000).unref()));
      // Spans and run log lines of this execution, made here (the child has no SDK, no sink).
      const observe = new ChildObserver(log, { telemetry: o.telemetry, traceparent: o.traceparent, runLog: o.runLog, logger: this.o.logger, who: `child pid ${child.pid}`, events: o.events });
      // A grant's attempt must begin within the heartbeat timeout: an honest child sends it in
      // the turn the grant arrives, and one blocked that long is killed anyway (unused-grants.ts).
      const unused = this.unusedGrants.get(version) ?? new UnusedGrants();
      this.unusedGrants.set(version, unused);
      const grants = {
        deadlineMs: watch.heartbeatTimeoutMs, unused, file: file.path,
        onUnused: (line: string) => this.o.logger?.enabled('warn') && this.o.logger.log('warn', `workflow '${wf.definition.name}' run ${log.runId} (file ${file.path}): ${line}`),
      };
      const served = await Promise.race([serveStepLog(socket, log, { maxPayloadBytes, cancelGraceMs: o.cancelGraceMs, watch, onLog, crashed, observe, queues, grants }), diedLate]);
      if (verdicts.size === 0) this.verdicts.delete(log.runId);
      runEnded = served.outcome.type === 'succeeded' || served.outcome.type === 'failed' || served.outcome.type === 'cancelled';
      const exitGrace = setTimeout(() => child.kill(), this.o.exitGraceMs ?? 2_000);
      await child.exited;
      clearTimeout(exitGrace);
      // The next execution of this version finds its child loaded (docs/runner.md, Warm
      // children); spawned once this one is over, so that it does not compete with it.
      this.prewarm(key, spec);
      return served;
    } catch (err) {
      // What the child said last explains most endings (a permission, a syntax error).
      const gone = await Promise.race([child.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 500).unref())]);
      // Crashed while loading, before it connected: every child of this version would.
      const early = gone && !this.closed && !record.connected ? crashReason(await child.exited, child, log.runId, this.memoryMiB(), this.maxFileBytes(), this.maxWriteBytes()) : undefined;
      if (early) runEnded = true;
      if (early) return { outcome: { type: 'failed', error: { name: 'ChildCrashedError', message: `${early} (before it connected: while loading the workflow file)` } } as RunOutcome, cancelDelivered: false };
      if (!gone) child.kill();
      if (err instanceof ProtocolError && gone && !err.message.includes(' exited (')) throw new ProtocolError(`${err.message}; the child said: ${lastLine(child.stderr)}`);
      throw err;
    } finally {
      clearTimeout(connectTimer);
      died.catch(() => {});
      this.listener.revoke(claimant);
      const exit = await child.exited;
      Object.assign(record, { exit, stdout: child.stdout, stderr: child.stderr });
      if (runEnded) this.runWrites.delete(log.runId);
      else this.runWrites.set(log.runId, wroteBefore + child.written);
    }
  }

  /** The snapshot's module graph, resolved by Deno, holds only its own files and the
   *  engine's (module-graph.ts); checked once per version per process. */
  private checkGraph(snap: Snapshot, what: string): Promise<void> {
    if (this.o.unsafeSkipGraphCheckForTests) return Promise.resolve();
    let checked = this.checkedGraphs.get(snap.digest);
    if (!checked) {
      const ctx: GraphContext = { binary: this.binary, flags: moduleFlags(this.importMap), env: this.env({}), trustedDirs: childPackageDirs(), signal: this.closing.signal };
      checked = checkModuleGraph(ctx, snap.dir, snap.runEntry, what);
      checked.catch(() => this.checkedGraphs.delete(snap.digest));
      this.checkedGraphs.set(snap.digest, checked);
    }
    return checked;
  }

  /** Spawns a run child for `spec` with a fresh single-use token; `connected` resolves with
   *  its authenticated connection. */
  private spawn(spec: ChildSpec): Spawned {
    let claimed!: (s: Socket) => void;
    const connected = new Promise<Socket>((r) => (claimed = r));
    const claimant = (s: Socket) => claimed(s);
    const token = this.listener.issue(claimant);
    const env: Record<string, string> = { [RUNNER_TOKEN_ENV]: token };
    for (const name of spec.permissions.env ?? []) {
      const v = process.env[name];
      if (v !== undefined) env[name] = v;
    }
    const flags = denoFlags({ permissions: spec.permissions, enginePort: this.listener.port, baseDir: spec.baseDir, importMap: this.importMap });
    const p = spec.permissions;
    const view = this.view(spec.dir, grantedPaths(spec.baseDir, p.read), grantedPaths(spec.baseDir, p.write), (p.net ?? []).length > 0);
    const mem = this.memoryMiB();
    const cmd = childCommand(this.confinement, view, ['run', `--v8-flags=--max-old-space-size=${mem}`, PRELUDE, ...flags, spec.runEntry, String(this.listener.port), String(spec.maxPayloadBytes)], mem, this.maxFileBytes());
    let child: DenoChild;
    try {
      child = new DenoChild(cmd.file, cmd.args, this.env(env), spec.dir, cmd.infoFd);
    } catch (err) {
      this.listener.revoke(claimant);
      throw err;
    }
    // Bounded from its start: a warm child's top-level code runs before any run takes it.
    child.boundWrites(this.maxWriteBytes());
    this.live.add(child);
    void child.exited.then(() => this.live.delete(child));
    return { child, connected, claimant };
  }

  /** The warm child kept for `key`, if one is alive (it is no longer kept). */
  private takeWarm(key: string): Spawned | undefined {
    const w = this.warm.get(key);
    if (!w) return undefined;
    this.warm.delete(key);
    clearTimeout(w.timer);
    return this.live.has(w.child) ? w : undefined;
  }

  /** Spawns a child for the next execution of `key` unless one waits already: it loads the
   *  snapshot, connects and authenticates, then waits for a hello; unused for warmIdleMs,
   *  it is killed by PID. At most MAX_WARM versions are kept warm (the oldest goes first). */
  private prewarm(key: string, spec: ChildSpec): void {
    const idleMs = this.o.warmIdleMs ?? DEFAULT_WARM_IDLE_MS;
    if (this.closed || idleMs <= 0 || this.warm.has(key)) return;
    if (this.warm.size >= MAX_WARM) {
      const [oldKey, oldest] = this.warm.entries().next().value!;
      this.warm.delete(oldKey);
      clearTimeout(oldest.timer);
      oldest.child.kill();
    }
    let s: Spawned;
    try {
      s = this.spawn(spec);
    } catch {
      return; // the next execution spawns its own child (and reports why it cannot)
    }
    const entry = { ...s, timer: setTimeout(() => {
      if (this.warm.get(key) === entry) this.warm.delete(key);
      s.child.kill();
    }, idleMs) };
    entry.timer.unref();
    void s.child.exited.then(() => {
      this.listener.revoke(s.claimant);
      if (this.warm.get(key) === entry) (this.warm.delete(key), clearTimeout(entry.timer));
    });
    this.warm.set(key, entry);
  }

  private guarded(): Protected[] {
    return [{ what: "the engine's data dir", path: resolve(this.o.dataDir) }, ...(this.o.protect ?? [])];
  }

  private memoryMiB(): number {
    return this.o.memoryMiB ?? DEFAULT_CHILD_MEMORY_MIB;
  }

  private maxFileBytes(): number {
    return this.o.maxFileBytes ?? DEFAULT_CHILD_MAX_FILE_BYTES;
  }

  private maxWriteBytes(): number {
    return this.o.maxWriteBytes ?? DEFAULT_CHILD_MAX_WRITE_BYTES;
  }

  private env(extra: Record<string, string>): Record<string, string> {
    return { DENO_DIR: this.denoDir, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...extra };
  }
}
