// The SQLite file: opening it safely, and every statement the executor runs. Methods are
// synchronous (better-sqlite3); callers group writes into transactions via CommitQueue.
import Database from 'better-sqlite3';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError, type ErrorInfo } from '../../domain/errors.ts';
import { toStepView, type JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import { identityCodec, type PayloadCodec } from '../../domain/payload-codec.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import { RunLinks } from './run-links.ts';
import { RunControlRows, type ControlColumns } from './run-control.ts';
import type { RunFilter, RunView, StepView } from '../../domain/run-view.ts';
import { OwnerLease } from './owner-lease.ts';
import { migrate } from './schema.ts';
import { vouched } from './verified-mark.ts';
import { nativeAddonPath } from './native-addon.ts';
import { isoTime } from '../../domain/iso-time.ts';
import { WorkflowPauseRows } from './workflow-pauses.ts';

// Moved to the domain (every backend reports steps the same way); re-exported for callers here.
export { toStepView };

export type Durability = 'full' | 'normal';

export interface RunRow extends ControlColumns {
  run_id: string;
  workflow: string;
  version: string;
  status: RunStatus;
  input: string;
  output: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  wake_at: number | null;
  cancel_requested: number;
  created_seq: number;
  /** Who asked to cancel, and when (schema 7; NULL before). */
  cancel_by?: string | null;
  cancel_at?: number | null;
  /** The run's W3C trace context (schema 10; NULL when it was started untraced). */
  trace_parent?: string | null;
}

/** What a run's creator knows of its row: enough for its view at the end (finishedView). */
export interface CreatedRun {
  workflow: string;
  version: string;
  /** The input's JSON text, before the codec. */
  inputText: string;
  createdAt: number;
  deadlineAt?: number;
  rerunOf?: string;
}

interface StepRow {
  run_id: string;
  seq: number;
  name: string;
  kind: JournalEntry['kind'];
  status: JournalEntry['status'];
  attempts: number;
  result: string | null;
  error: string | null;
  started_at: number | null;
  ended_at: number | null;
  wake_at: number | null;
  next_retry_at: number | null;
  done_order: number | null;
  retry_limit?: number | null;
}

export const DB_FILE = 'tranquil.db';

/** The run's integer key in the steps table, looked up from its run_id. */
const RUN_SEQ = '(SELECT created_seq FROM runs WHERE run_id = ?)';

/** The statements a run's life writes (a 10-step run: insertRun, setStatus 'running', ten
 *  upsertStep, finishRun). Exported for the bench's physical limit, which runs these same
 *  statements on this same schema without the engine (bench/lib/raw-sqlite.ts). Hot
 *  statements take positional parameters (cheaper to bind than named ones). */
export const RUN_WRITES = {
  insertRun: `INSERT INTO runs (run_id, workflow, version, status, input, created_at, updated_at, created_seq)
              VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)
              ON CONFLICT (run_id) DO NOTHING`,
  setStatus: `UPDATE runs SET status = ?, wake_at = ?, updated_at = ? WHERE run_id = ?`,
  finishRun: `UPDATE runs SET status = ?, output = ?, error = ?, wake_at = NULL, updated_at = ? WHERE run_id = ?`,
  // Steps are keyed by the run's created_seq (schema v3: locality of runs in flight).
  upsertStep: `INSERT INTO steps (run_seq, run_id, seq, name, kind, status, attempts, result, error, started_at, ended_at, wake_at, next_retry_at, done_order, retry_limit)
               VALUES (${RUN_SEQ}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (run_seq, seq) DO UPDATE SET name = excluded.name, kind = excluded.kind, status = excluded.status,
                 attempts = excluded.attempts, result = excluded.result, error = excluded.error, started_at = excluded.started_at,
                 ended_at = excluded.ended_at, wake_at = excluded.wake_at, next_retry_at = excluded.next_retry_at,
                 done_order = excluded.done_order, retry_limit = excluded.retry_limit`,
} as const;

/** Opens the data dir's file for one owner: creates the schema's first version on a new
 *  file, takes the owner lease, and only then upgrades the schema, so a refused engine
 *  never changes the tables under the engine that owns the file. */
export function openOwned(dataDir: string, durability: Durability, ownerId: string, check?: (db: Database.Database) => void): { db: Database.Database; lease: OwnerLease } {
  const db = openDatabase(dataDir, durability, 1);
  // `check`: refuses the file before this engine writes anything to it (a wrong key).
  try {
    check?.(db);
  } catch (err) {
    db.close();
    throw err;
  }
  const lease = new OwnerLease(db, ownerId);
  try {
    lease.acquire();
    migrate(db);
    return { db, lease };
  } catch (err) {
    lease.release();
    db.close();
    throw err instanceof StorageError ? err : new StorageError(`cannot open ${db.name}: ${(err as Error).message}`);
  }
}

export interface OpenOptions {
  /** better-sqlite3's native addon, when not the installed one (tests point it at a
   *  missing file to check how a binding that does not load is reported). */
  nativeBinding?: string;
}

/** `schemaUpTo`: migrate only that far (the owner table exists from version 1). */
export function openDatabase(dataDir: string, durability: Durability, schemaUpTo?: number, options: OpenOptions = {}): Database.Database {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new StorageError(`cannot create data dir ${JSON.stringify(dataDir)}: ${(err as Error).message}`); // EACCES, ENOTDIR, a NUL in the path
  }
  const file = join(dataDir, DB_FILE);
  const existed = existsSync(file);
  // The whole-file check costs ~2 ms per MB; it is skipped only when the file is exactly as
  // this engine left it: at its last clean stop (see SqliteStore.close), or after a crash, at
  // its last checkpoint (verified-mark.ts).
  if (existed && !takeCleanMark(file) && !vouched(file)) refuseDamaged(file, options);
  let db: Database.Database | undefined;
  try {
    // Created owner-only before SQLite opens it (its -wal/-shm files take the same mode).
    if (!existed) closeSync(openSync(file, 'a', 0o600));
    db = new Database(file, { nativeBinding: options.nativeBinding ?? nativeAddonPath() });
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 5000');
    migrate(db, schemaUpTo);
    return db;
  } catch (err) {
    db?.close();
    throw new StorageError(`cannot open ${file}: ${oneLine(err)}`);
  }
}

/** A damaged file (truncated, overwritten, broken b-tree) is refused before anything is
 *  written to it: a read-only quick_check (structure, not content; ~1 ms per MB). */
function refuseDamaged(file: string, options: OpenOptions = {}): void {
  let ro: Database.Database | undefined;
  let verdict: string;
  try {
    ro = new Database(file, { readonly: true, fileMustExist: true, nativeBinding: options.nativeBinding ?? nativeAddonPath() });
    verdict = String(ro.pragma('quick_check(1)', { simple: true })).replace(/^\*\*\* in database \w+ \*\*\*\n/, '');
  } catch (err) {
    // Only SQLite saying the bytes are wrong means damaged; a binding that does not load,
    // a permission or a lock is "cannot open", and the file may be perfectly fine.
    if (openFailureKind(err) === 'cannot-open') throw new StorageError(`cannot open ${file}: ${oneLine(err)}`);
    verdict = (err as Error).message;
  } finally {
    ro?.close();
  }
  if (verdict !== 'ok') {
    throw new StorageError(`refusing to open ${file}: the database file is damaged (${verdict.split('\n')[0]}); it was left untouched: restore it from a backup or move it away`);
  }
}

/** SQLite result codes that mean the file's bytes are not a sound database. */
const DAMAGED_CODES = /^SQLITE_(CORRUPT|NOTADB|FORMAT|IOERR_SHORT_READ)/;

/** Why opening (or checking) a database file failed: 'damaged' when SQLite read the file and
 *  found its bytes wrong; 'cannot-open' for everything else: better-sqlite3's native binding
 *  missing or built for another Node (no SQLite code at all), permissions, locks, I/O. */
export function openFailureKind(err: unknown): 'damaged' | 'cannot-open' {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && DAMAGED_CODES.test(code) ? 'damaged' : 'cannot-open';
}

const oneLine = (err: unknown): string => String((err as Error)?.message ?? err).split('\n')[0]!;

/** Same inode, size and ctime: no byte of the file can have changed since (ctime moves on
 *  every write, truncate, chmod or rename over it, and no tool can set it back). */
export function identity(file: string): string {
  const st = statSync(file, { bigint: true });
  return `${st.dev}:${st.ino}:${st.size}:${st.ctimeNs}`;
}

const cleanMarkOf = (file: string) => `${file}.clean`;

/** Consumes the clean-stop mark; true when it still describes the file. */
function takeCleanMark(file: string): boolean {
  const mark = cleanMarkOf(file);
  let recorded: string;
  try {
    recorded = readFileSync(mark, 'utf8');
    unlinkSync(mark);
  } catch {
    return false;
  }
  const wal = `${file}-wal`;
  try {
    return recorded === identity(file) && (!existsSync(wal) || statSync(wal).size === 0);
  } catch {
    return false;
  }
}

const iso = (ms: number | null | undefined): string | undefined => (ms == null ? undefined : isoTime(ms)); // iso-time.ts: no ICU

export class SqliteStore {
  private nextSeq: number;
  /** Prepared on the first traced start (a read-only reader of an older file never needs it). */
  private setTraceParent: Database.Statement | undefined;
  private countStmt: Database.Statement | undefined;
  private readonly s;
  /** Parent-child links (run-links.ts). */
  readonly links: RunLinks;
  /** Deadline, rerun link and pause of a run (run-control.ts). */
  readonly control: RunControlRows;
  /** Paused workflows and the runs they hold (workflow-pauses.ts). */
  readonly pauses: WorkflowPauseRows;

  /** `codec`: every payload column (input, output, error, step result and error, signal and
   *  event payload) is written through it and read back through it (docs/data.md). */
  constructor(readonly db: Database.Database, readonly codec: PayloadCodec = identityCodec) {
    const q = (sql: string) => db.prepare(sql);
    this.s = {
      insertRun: q(RUN_WRITES.insertRun),
      getRun: q(`SELECT * FROM runs WHERE run_id = ?`),
      setStatus: q(RUN_WRITES.setStatus),
      finishRun: q(RUN_WRITES.finishRun),
      // A suspended run's accepted cancel is also a due wake: after a crash, start-up's first
      // timer scan resumes it (runs_wake index) so the cancel is delivered, not lost until
      // something else wakes the run; an execution clears wake_at as it claims the run.
      requestCancel: q(`UPDATE runs SET cancel_requested = 1, updated_at = @now,
                          wake_at = CASE WHEN status IN ('waiting', 'sleeping', 'retrying') THEN @now ELSE wake_at END,
                          cancel_at = CASE WHEN cancel_by IS NULL AND @by IS NOT NULL THEN @now ELSE cancel_at END,
                          cancel_by = coalesce(cancel_by, @by) WHERE run_id = @run_id`),
      // A cancel that ends the run at once records its asker too (the first asker stays).
      noteCancel: q(`UPDATE runs SET cancel_at = CASE WHEN cancel_by IS NULL THEN @now ELSE cancel_at END,
                          cancel_by = coalesce(cancel_by, @by) WHERE run_id = @run_id`),
      resetForRetry: q(`UPDATE runs SET status = 'pending', error = NULL, output = NULL, wake_at = NULL, cancel_requested = 0,
                          cancel_by = NULL, cancel_at = NULL, updated_at = @now WHERE run_id = @run_id`),
      steps: q(`SELECT * FROM steps WHERE run_seq = ${RUN_SEQ} ORDER BY seq`),
      truncateSteps: q(`DELETE FROM steps WHERE run_seq = ${RUN_SEQ} AND seq >= ?`),
      upsertStep: q(RUN_WRITES.upsertStep),
      // A due sleep is finished by the claim itself, so the woken run replays past it. Sleeps
      // due together complete in wake time order, after every step completed before.
      wakeSleep: q(`UPDATE steps SET status = 'succeeded', ended_at = @now, done_order = w.base + w.rn
                     FROM (SELECT seq AS s, row_number() OVER (ORDER BY wake_at, seq) AS rn,
                                  (SELECT coalesce(max(done_order), 0) FROM steps WHERE run_seq = ${RUN_SEQ.replace('?', '@run_id')}) AS base
                           FROM steps WHERE run_seq = ${RUN_SEQ.replace('?', '@run_id')} AND kind = 'sleep' AND status = 'sleeping' AND wake_at <= @now) AS w
                     WHERE steps.run_seq = ${RUN_SEQ.replace('?', '@run_id')} AND steps.seq = w.s`),
      due: q(`SELECT run_id, wake_at FROM runs WHERE wake_at IS NOT NULL AND wake_at <= ? ORDER BY wake_at LIMIT ?`),
      nextWake: q(`SELECT min(wake_at) AS at FROM runs WHERE wake_at IS NOT NULL`),
      // Runs an engine was executing, plus waiting runs whose signal landed just before a crash.
      unfinished: q(`SELECT run_id FROM runs WHERE status IN ('pending', 'running')
                     OR (status = 'waiting' AND EXISTS (SELECT 1 FROM signals s WHERE s.run_id = runs.run_id AND s.consumed_seq IS NULL))
                     ORDER BY created_seq`),
      cancelling: q(`SELECT run_id FROM runs WHERE cancel_requested = 1 AND status NOT IN ('succeeded', 'failed', 'cancelled')`),
      maxSeq: q(`SELECT coalesce(max(created_seq), 0) AS n FROM runs`),
      insertSignal: q(`INSERT INTO signals (run_id, name, payload, created_at) VALUES (?, ?, ?, ?)`),
      openSignal: q(`SELECT id, payload FROM signals WHERE run_id = ? AND name = ? AND consumed_seq IS NULL ORDER BY id LIMIT 1`),
      consumeSignal: q(`UPDATE signals SET consumed_seq = ? WHERE id = ?`),
      getEvent: q(`SELECT run_ids FROM events WHERE id = ?`),
      insertEvent: q(`INSERT INTO events (id, name, payload, created_at, run_ids) VALUES (?, ?, ?, ?, ?)`),
    };
    this.nextSeq = (this.s.maxSeq.get() as { n: number }).n + 1;
    this.links = new RunLinks(db);
    this.control = new RunControlRows(db);
    this.pauses = new WorkflowPauseRows(db);
  }

  /** A payload column's value (decoded through the codec). */
  plain<T = Json>(stored: string): T {
    return JSON.parse(this.codec.decode(stored)) as T;
  }

  /** A payload's column text (null when absent). */
  private seal(value: Json | undefined): string | null {
    return value === undefined ? null : this.codec.encode(JSON.stringify(value));
  }

  /** A write transaction outside the group commit (start-up). IMMEDIATE: the
   *  checkpoint worker also writes (the -wal restart, checkpoint-worker.ts), and a deferred
   *  transaction that read before that write would fail to write (SQLITE_BUSY, snapshot);
   *  this one waits for the lock (busy_timeout) instead, a moment once per checkpoint. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  insertRun(r: { runId: string; workflow: string; version: string; input: Json; inputText?: string; now: number; traceparent?: string }): boolean {
    const info = this.s.insertRun.run(r.runId, r.workflow, r.version, this.codec.encode(r.inputText ?? JSON.stringify(r.input)), r.now, r.now, this.nextSeq);
    if (info.changes > 0) this.nextSeq++;
    // A second statement only for a traced start: the untraced insert stays RUN_WRITES'.
    if (info.changes > 0 && r.traceparent !== undefined) (this.setTraceParent ??= this.db.prepare(`UPDATE runs SET trace_parent = ? WHERE run_id = ?`)).run(r.traceparent, r.runId);
    // Its workflow paused (workflows.pause): the run is born paused, held (docs/control.md).
    if (info.changes > 0) this.pauses.holdIfPaused(r.runId, r.workflow);
    return info.changes > 0;
  }

  /** Unfinished runs by status (the runs_status index; read at a metrics scrape). */
  countUnfinished(): Record<string, number> {
    const rows = (this.countStmt ??= this.db.prepare(`SELECT status, count(*) AS n FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled') GROUP BY status`)).all() as { status: string; n: number }[];
    const out: Record<string, number> = {};
    for (const r of rows) out[r.status] = r.n;
    return out;
  }

  getRunRow(runId: string): RunRow | undefined {
    return this.s.getRun.get(runId) as RunRow | undefined;
  }

  setStatus(runId: string, status: RunStatus, wakeAt: number | undefined, now: number): void {
    this.s.setStatus.run(status, wakeAt ?? null, now, runId);
  }

  finishRun(runId: string, status: 'succeeded' | 'failed' | 'cancelled', now: number, output?: Json, error?: ErrorInfo): void {
    this.s.finishRun.run(status, this.seal(output), this.seal(error as Json | undefined), now, runId);
  }

  /** `by`: who asked (kept only if no one asked before). */
  requestCancel(runId: string, now: number, by: string | null): void {
    this.s.requestCancel.run({ run_id: runId, now, by });
  }

  /** Records who asked to cancel and when, without asking the run (it ends at once). */
  noteCancel(runId: string, now: number, by: string): void {
    this.s.noteCancel.run({ run_id: runId, now, by });
  }

  resetForRetry(runId: string, now: number): void {
    this.s.resetForRetry.run({ run_id: runId, now });
  }

  journal(runId: string): JournalEntry[] {
    return (this.s.steps.all(runId) as StepRow[]).map((r) => toEntry(r, this.codec));
  }

  /** runs.retry: the journal from step `seq` on is discarded (signals those steps consumed
   *  stay consumed: a wait the code reaches again takes the next signal). */
  truncateSteps(runId: string, seq: number): void {
    this.s.truncateSteps.run(runId, seq);
  }

  /** `resultText`: the JSON text of e.result when the caller already has it. */
  recordStep(runId: string, e: JournalEntry, resultText?: string): void {
    this.s.upsertStep.run(
      runId, runId, e.seq, e.name, e.kind, e.status, e.attempts,
      resultText !== undefined ? this.codec.encode(resultText) : this.seal(e.result),
      this.seal(e.error as Json | undefined),
      e.startedAt ?? null, e.endedAt ?? null, e.wakeAt ?? null, e.nextRetryAt ?? null, e.order ?? null, e.retryLimit ?? null,
    );
  }

  /** Marks the run's due sleep step finished (inside the claim of a due run). */
  wakeSleep(runId: string, now: number): void {
    this.s.wakeSleep.run({ now, run_id: runId });
  }

  /** The runs due to wake, with when each was due (timer lag, docs/observability.md). */
  dueRuns(now: number, limit: number): { runId: string; wakeAt: number }[] {
    return (this.s.due.all(now, limit) as { run_id: string; wake_at: number }[]).map((r) => ({ runId: r.run_id, wakeAt: r.wake_at }));
  }

  nextWakeAt(): number | undefined {
    return (this.s.nextWake.get() as { at: number | null }).at ?? undefined;
  }

  /** Unfinished runs with a cancel asked (and not yet delivered when it was asked). */
  cancellingRunIds(): string[] {
    return (this.s.cancelling.all() as { run_id: string }[]).map((r) => r.run_id);
  }

  unfinishedRunIds(): string[] {
    return (this.s.unfinished.all() as { run_id: string }[]).map((r) => r.run_id);
  }

  insertSignal(runId: string, name: string, payload: Json, now: number): void {
    this.s.insertSignal.run(runId, name, this.codec.encode(JSON.stringify(payload)), now);
  }

  /** Oldest unconsumed signal of that name; marks it consumed by step `seq`. */
  takeSignal(runId: string, name: string, seq: number): { payload: Json } | undefined {
    const row = this.s.openSignal.get(runId, name) as { id: number; payload: string } | undefined;
    if (!row) return undefined;
    this.s.consumeSignal.run(seq, row.id);
    return { payload: this.plain<Json>(row.payload) };
  }

  eventRunIds(id: string): string[] | undefined {
    const row = this.s.getEvent.get(id) as { run_ids: string } | undefined;
    return row ? (JSON.parse(row.run_ids) as string[]) : undefined;
  }

  insertEvent(id: string, name: string, payload: Json, runIds: string[], now: number): void {
    this.s.insertEvent.run(id, name, this.codec.encode(JSON.stringify(payload)), now, JSON.stringify(runIds));
  }

  /** Newest first; `beforeSeq`: only runs created before that one (a page cursor). */
  listRunRows(filter: Omit<RunFilter, 'cursor'> & { beforeSeq?: number }): RunRow[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (filter.since !== undefined) {
      where.push('created_at >= ?');
      args.push(Date.parse(filter.since));
    }
    if (filter.until !== undefined) {
      where.push('created_at <= ?');
      args.push(Date.parse(filter.until));
    }
    if (filter.beforeSeq !== undefined) {
      where.push('created_seq < ?');
      args.push(filter.beforeSeq);
    }
    if (filter.status) {
      where.push('status = ?');
      args.push(filter.status);
    }
    if (filter.workflow) {
      where.push('workflow = ?');
      args.push(filter.workflow);
    }
    if (filter.parent) {
      where.push('run_id IN (SELECT run_id FROM run_links WHERE parent_run_id = ?)');
      args.push(filter.parent);
    }
    if (filter.queue) {
      where.push('run_id IN (SELECT run_id FROM queue_waiting WHERE queue = ?)');
      args.push(filter.queue);
    }
    const sql = `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_seq DESC LIMIT ?`;
    return this.db.prepare(sql).all(...args, filter.limit ?? 100) as RunRow[];
  }

  view(row: RunRow, withSteps: boolean): RunView {
    const v: RunView = {
      runId: row.run_id,
      workflow: row.workflow,
      version: row.version,
      status: row.status,
      input: this.plain<Json>(row.input),
      createdAt: iso(row.created_at)!,
      updatedAt: iso(row.updated_at)!,
      steps: withSteps ? this.journal(row.run_id).map(toStepView) : [],
    };
    if (row.output != null) v.output = this.plain<Json>(row.output);
    if (row.error != null) v.error = this.plain<ErrorInfo>(row.error);
    if (row.wake_at != null) v.wakeAt = iso(row.wake_at);
    // Shown once the run ended cancelled (Restate learns the asker only then: same view).
    if (row.status === 'cancelled' && row.cancel_by != null && row.cancel_at != null) v.cancel = { by: row.cancel_by, at: iso(row.cancel_at)! };
    return this.links.decorate(this.control.decorate(row, v, withSteps), withSteps);
  }

  /** The view of a run this engine created and has just finished succeeded or failed, from
   *  what it wrote (no read of the row): what view() reads back then. `inputText` is the
   *  input's JSON as given to insertRun (before the codec). No cancel info: only a cancelled
   *  run shows it. */
  finishedView(runId: string, c: CreatedRun, status: 'succeeded' | 'failed', now: number, output?: Json, error?: ErrorInfo): RunView {
    const v: RunView = {
      runId, workflow: c.workflow, version: c.version, status, input: JSON.parse(c.inputText) as Json, createdAt: iso(c.createdAt)!, updatedAt: iso(now)!, steps: [],
    };
    // The output is the session's own round-tripped copy, stored as its JSON text.
    if (output !== undefined) v.output = output;
    if (error !== undefined) v.error = JSON.parse(JSON.stringify(error)) as ErrorInfo;
    if (c.deadlineAt !== undefined) v.deadline = iso(c.deadlineAt);
    if (c.rerunOf !== undefined) v.rerunOf = c.rerunOf;
    return this.links.decorate(v, false);
  }

  /** `clean`: a deliberate stop with nothing in flight. Records the closed file's identity
   *  so the next open can skip the whole-file check; a crash leaves no mark. */
  close(opts: { clean?: boolean } = {}): void {
    if (!this.db.open) return;
    const file = this.db.name;
    this.db.close();
    if (!opts.clean || this.db.memory) return;
    try {
      const wal = `${file}-wal`;
      if (existsSync(wal) && statSync(wal).size > 0) return; // another connection kept the WAL
      writeFileSync(cleanMarkOf(file), identity(file), { mode: 0o600 });
    } catch {
      // No mark: the next start checks the whole file, as after a crash.
    }
  }
}

function toEntry(r: StepRow, codec: PayloadCodec): JournalEntry {
  const e: JournalEntry = { seq: r.seq, name: r.name, kind: r.kind, status: r.status, attempts: r.attempts };
  if (r.result != null) e.result = JSON.parse(codec.decode(r.result)) as Json;
  if (r.error != null) e.error = JSON.parse(codec.decode(r.error)) as ErrorInfo;
  if (r.started_at != null) e.startedAt = r.started_at;
  if (r.ended_at != null) e.endedAt = r.ended_at;
  if (r.wake_at != null) e.wakeAt = r.wake_at;
  if (r.next_retry_at != null) e.nextRetryAt = r.next_retry_at;
  if (r.done_order != null) e.order = r.done_order;
  if (r.retry_limit != null) e.retryLimit = r.retry_limit;
  return e;
}

