// Group commit: writes queued in the same turn of the event loop share ONE transaction.
// Each caller's promise resolves only after that transaction has committed (durable at
// the configured synchronous level), and rejects if it rolled back. Never ack-before-durable.
//
// At durability 'full' the COMMIT itself does not fsync: WalSync syncs the -wal on the thread
// pool and the callers are answered from its callback (the event loop never waits for the
// disk; the next batch commits while this one syncs). `inline: true` keeps the fsync inside
// COMMIT on the main thread (the pre-WalSync shape, kept for the bench's side-by-side row).
//
// Fast path: the whole batch in one transaction, no savepoints. If any write throws, that
// transaction rolls back and the batch is replayed with a savepoint per write, so one bad
// write fails alone instead of failing its neighbours.
import type { Database, Transaction } from 'better-sqlite3';
import { StorageError } from '../../domain/errors.ts';
import { FaultCrash, type FaultPoints } from './fault-points.ts';
import type { SqliteStore } from './store.ts';
import { Checkpoints } from './verified-mark.ts';
import { WalSync } from './wal-sync.ts';

interface Pending {
  write: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class CommitQueue {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Transactions committed and writes carried, for benchmarks and diagnostics. */
  readonly stats = { transactions: 0, writes: 0 };
  private readonly all: Transaction<(batch: Pending[]) => unknown[]>;
  private readonly each: Transaction<(batch: Pending[]) => Map<number, unknown>>;
  /** Absent: COMMIT is durable by itself (inline fsync, durability 'normal', in memory). */
  readonly walSync: WalSync | undefined;
  /** The owner's checkpoints (after a batch, once the -wal is large) and the crash-start mark. */
  readonly checkpoints: Checkpoints | undefined;
  /** Told of each transaction once durable: its writes and the seconds from its COMMIT's
   *  start (metrics, docs/observability.md); absent: no clock is read. */
  onCommit: ((writes: number, seconds: number) => void) | undefined;

  constructor(store: SqliteStore, faults?: FaultPoints, opts: { inline?: boolean } = {}) {
    const db: Database = store.db;
    this.walSync = opts.inline ? undefined : WalSync.for(db);
    this.checkpoints = Checkpoints.for(db);
    // Wrappers built once: better-sqlite3's transaction() is costly to create per call.
    // Run IMMEDIATE (flush below): a batch that reads before it writes (a timer claim) in a
    // DEFERRED transaction fails at once with SQLITE_BUSY when another connection holds the
    // write lock (the checkpoint worker's -wal restart, a CLI process), since SQLite calls
    // no busy handler for a read that upgrades; IMMEDIATE waits for busy_timeout instead.
    this.all = db.transaction((batch: Pending[]) => {
      const results = batch.map((p) => p.write());
      if (faults?.hit('mid-batch')) throw new FaultCrash('mid-batch');
      return results;
    });
    const savepoint = db.transaction((write: () => unknown) => write());
    this.each = db.transaction((batch: Pending[]) => {
      const outcomes = new Map<number, unknown>();
      batch.forEach((p, i) => {
        try {
          outcomes.set(i, { ok: savepoint(p.write) });
        } catch (err) {
          // SQLite rolled the whole transaction back (disk full, I/O error): nothing of this
          // batch stands, and later writes must not run outside a transaction.
          if (!db.inTransaction) throw err;
          outcomes.set(i, { err });
        }
      });
      return outcomes;
    });
  }

  /** Before the owner's connection closes: waits for a checkpoint in flight and closes the
   *  checkpoint worker's connection, so the owner's is the last (see SqliteStore.close). */
  async close(): Promise<void> {
    await this.checkpoints?.close();
    this.walSync?.close();
  }

  /** A simulated crash: the checkpoint worker writes nothing more and never holds the process. */
  abandon(): void {
    this.checkpoints?.abandon();
    this.walSync?.close();
  }

  enqueue<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => this.push(write, resolve as (v: unknown) => void, reject));
  }

  /** As enqueue, for a write whose failure is not its caller's to handle: `lost` hears of it
   *  and the promise never settles (a run's journal writes: the session is given up). One
   *  promise per write instead of two (this is every step's write). */
  enqueueOrLose<T>(write: () => T, lost: (err: unknown) => void): Promise<T> {
    return new Promise<T>((resolve) => this.push(write, resolve as (v: unknown) => void, lost));
  }

  /** As enqueueOrLose, with `done` called once the write is durable instead of a promise
   *  (the session's step path: no promise, executor and resolving functions per step). */
  enqueueThen(write: () => unknown, done: (v: unknown) => void, lost: (err: unknown) => void): void {
    this.push(write, done, lost);
  }

  private push(write: () => unknown, resolve: (v: unknown) => void, reject: (e: unknown) => void): void {
    this.queue.push({ write, resolve, reject });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes not yet answered: queued, or committed and waiting for their sync. */
  get size(): number {
    return this.queue.length + (this.walSync?.pending ?? 0);
  }

  /** Called once a batch's callers are all settled and nothing is left (size 0): whoever
   *  waits for the engine to be idle counts queued writes as work, and a write that starts
   *  or ends no run (a timer claim that found nothing, a signal, a retention sweep) would
   *  otherwise never tell it. */
  onDrained: (() => void) | undefined;

  private settled(): void {
    if (this.answering.length === 0 && this.size === 0) this.onDrained?.();
  }

  private flush(): void {
    // A checkpoint's last pass holds commits for a moment (verified-mark.ts); resumed after.
    if (this.checkpoints?.wait(() => this.flush())) return;
    // Both syncs busy: a batch committed now would only wait for one of them to end. Held
    // until then, it commits with what arrives meanwhile: fewer, larger transactions (each
    // COMMIT writes the pages it dirtied to the -wal, ~16 frames of the same few hot pages
    // at 100 concurrent runs). Its callers wait no longer for their answer but for the COMMIT
    // itself (~0.2 ms), which now runs after the sync rather than during it.
    const sync = this.walSync;
    if (sync && !sync.failed && sync.saturated && this.queue.length < MAX_HELD) return sync.whenRoom(() => this.flush());
    // Callers of a durable batch are still being answered (ANSWER_SLICE per turn): each of
    // them is about to queue its next write. Held until the last is answered, those writes
    // commit together instead of one small transaction per turn. The hold ends within a few
    // turns (nothing new becomes durable while nothing commits, so the answers run out); at
    // 100 concurrent runs it cut the main thread's CPU per step by about a quarter.
    if (this.answering.length > 0 && this.queue.length < MAX_HELD) {
      this.heldForAnswers = true;
      return;
    }
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (sync?.failed) {
      for (const p of batch) p.reject(sync.failed);
      return this.settled();
    }
    let results: unknown[];
    const t0 = this.onCommit ? performance.now() : 0;
    try {
      results = sync ? sync.relaxed(() => this.all.immediate(batch)) : this.all.immediate(batch);
    } catch {
      this.flushOneByOne(batch);
      return;
    }
    this.count(batch.length);
    this.durable(() => this.answer(batch, results), batch, t0);
  }

  /** A flush waits for the answers in `answering` to run out (see flush). */
  private heldForAnswers = false;

  /** Durable batches whose callers are not all answered yet, oldest first. */
  private readonly answering: { batch: Pending[]; results: unknown[]; next: number }[] = [];

  /** Answers a durable batch's callers, ANSWER_SLICE per turn of the event loop across every
   *  batch waiting: one sync often makes two or three batches durable at once, and a slice per
   *  batch held the loop for 40-50 answers. Oldest batch first, so answers keep commit order. */
  private answer(batch: Pending[], results: unknown[]): void {
    if (this.answering.push({ batch, results, next: 0 }) === 1) this.answerSlice();
  }

  private answerSlice(): void {
    let left = ANSWER_SLICE;
    while (left > 0 && this.answering.length > 0) {
      const a = this.answering[0]!;
      const end = Math.min(a.batch.length, a.next + left);
      for (let i = a.next; i < end; i++) {
        const p = a.batch[i]!;
        const result = a.results[i];
        a.results[i] = undefined;
        p.resolve(result);
        // Emptied once answered: a stale copy of a batch array (V8 leaves one behind each time
        // an array grows) that reached the old generation keeps pointing at its writes until
        // a full GC; an empty one reaches nothing (not the write's run, its entry, its promise).
        p.write = p.resolve = p.reject = answered;
      }
      left -= end - a.next;
      a.next = end;
      if (end === a.batch.length) this.answering.shift();
    }
    if (this.answering.length > 0) setImmediate(() => this.answerSlice());
    else if (this.heldForAnswers) {
      // After the last callers' code has run (their writes queued): the held batch commits.
      this.heldForAnswers = false;
      setImmediate(() => this.flush());
    } else this.settled();
  }

  private flushOneByOne(batch: Pending[]): void {
    let outcomes: Map<number, unknown>;
    const t0 = this.onCommit ? performance.now() : 0;
    try {
      outcomes = this.walSync ? this.walSync.relaxed(() => this.each.immediate(batch)) : this.each.immediate(batch);
    } catch (err) {
      const e = asStorageError(err);
      for (const p of batch) p.reject(e);
      return this.settled();
    }
    this.count(batch.length);
    this.durable(() => {
      batch.forEach((p, i) => {
        const o = outcomes.get(i) as { ok?: unknown; err?: unknown };
        if ('err' in o) p.reject(asStorageError(o.err));
        else p.resolve(o.ok);
      });
      this.settled();
    }, batch, t0);
  }

  /** Answers a committed batch once it is on disk (at once when COMMIT already synced). */
  private durable(answer: () => void, batch: Pending[], t0: number): void {
    this.checkpoints?.afterCommit();
    const observe = this.onCommit;
    if (!this.walSync) {
      observe?.(batch.length, (performance.now() - t0) / 1000);
      return answer();
    }
    this.walSync.after((err) => {
      if (!err) {
        observe?.(batch.length, (performance.now() - t0) / 1000);
        return answer();
      }
      for (const p of batch) p.reject(err);
      this.settled();
    });
  }

  private count(writes: number): void {
    this.stats.transactions++;
    this.stats.writes += writes;
  }
}

/** SQLite could not store a write (SQLITE_BUSY past busy_timeout, SQLITE_FULL, I/O): the
 *  caller gets a StorageError that says so in one line. A write's own errors pass as they are. */
function asStorageError(err: unknown): unknown {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return err;
  return new StorageError(`storage: ${(err as Error).message} (${code}); nothing of this write was stored`);
}

const answered = (): void => {};

/** Writes held for a sync slot at most: bounds one transaction (and its time on the loop). */
const MAX_HELD = 256;

/** Callers answered per turn of the event loop. Each answer runs that run's code up to its
 *  next step (a body, the next write): 100 answers in one go held the host's event loop
 *  ~5-10 ms. In slices, timers and I/O of the host run in between; the runs answered first
 *  commit their next writes while the rest wait their turn. The sync's callback answers the
 *  first slice and the same loop iteration the second, so a slice is half of what one
 *  iteration can carry; a scavenge that lands in that iteration adds its pause on top.
 *  Measured on the built engine, 100 concurrent x 10-step runs (bench/child-citizen.ts lag,
 *  19 alternating pairs, 2026-12-02): 8 per turn against 16, lag p99 lower in 16 of 19 pairs
 *  (medians 2.59 against 2.85 ms), ~1.5% fewer steps/s (median pair), the single worst tick
 *  a little longer (medians 5.2 against 4.9 ms). Earlier, with more work per answer: all at
 *  once p99 ~14 ms, 32 per turn 9-11, 16 per turn ~7. */
const ANSWER_SLICE = 8;
