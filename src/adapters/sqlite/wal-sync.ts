// Durable commits without blocking the event loop (durability 'full' on a file). The group
// commit's transaction runs at synchronous=NORMAL (in WAL mode: COMMIT appends the frames to
// the -wal file and does not fsync), then the -wal is fdatasync'ed on libuv's thread pool and
// only then are the batch's callers answered. A commit that lands while a sync is in flight
// starts a second one at once (at most two in flight; later commits wait for the next one:
// one sync covers every frame written before it started), so the main thread prepares and
// commits batch N+1 while batch N's sync runs.
//
// Why nothing is acknowledged before it is durable (the argument, docs/reliability.md):
//  - a batch's callers are settled only from the callback of an fdatasync that STARTED after
//    that batch's COMMIT returned; the WAL is append-only between checkpoints and fdatasync
//    persists every byte written to the inode before the call, so the batch's frames (and the
//    commit frame that makes them visible to recovery) are on disk when anyone hears of them;
//  - checkpoints keep SQLite's own NORMAL-mode rule: the WAL is synced before frames are
//    copied into the database file, which is synced before the WAL restarts;
//  - the fd is opened per sync, so a WAL replaced by a new inode is the one synced; the first
//    sync of each new inode also fsyncs the directory (its entry must survive too);
//  - an fdatasync error is fatal: its batch and every later one is rejected with a
//    StorageError and nothing is committed any more (after EIO the kernel may have dropped the
//    dirty pages, so a retried sync could "succeed" without the data);
//  - a connection closed while a sync is in flight (an abandoned engine) rejects its batches;
//  - writes outside the group commit (start-up) keep synchronous=FULL: the NORMAL level is
//    set only around the queue's own transactions (timer claims are queue writes) and the
//    owner lease's heartbeat (owner-lease.ts says why it may).
// A reader on the same connection can see a committed batch while its sync is in flight
// (never a caller of the write); see docs/reliability.md.
import type { Database } from 'better-sqlite3';
import { close, closeSync, fdatasync, fstatSync, fsync, open, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { StorageError } from '../../domain/errors.ts';

/** `settle(err?)`: called once the batch is durable, or with the error that means it is not. */
type Settle = (err?: StorageError) => void;

/** Syncs in flight at once. A batch committed while one sync runs starts the next at once
 *  rather than waiting for it to end (a turn of the pool and of the event loop saved per
 *  batch); more would only queue in the kernel behind the same journal commit. */
const MAX_IN_FLIGHT = 2;

interface Flight {
  group: Settle[];
  /** The descriptor this sync runs on (closed once no sync uses it, if it was retired). */
  fd: number;
}

export class WalSync {
  /** Batches committed after the last sync started: the next sync covers them. */
  private waiting: Settle[] = [];
  /** Syncs in flight, oldest first. A sync that ends covers its own group and every older
   *  one (it started after all of them committed), whatever order the pool finishes in. */
  private flights: Flight[] = [];
  private syncedIno: number | undefined;
  /** The -wal kept open across syncs (an open and a close per sync were two more trips
   *  through the thread pool and the event loop), and the inode it names. */
  private fd: number | undefined;
  private fdIno: number | undefined;
  private closed = false;
  /** Syncs whose fdatasync has not returned (a flight answered by a younger sync may still
   *  be running on its descriptor). An array, not a Set: a long-lived Set that churns keeps
   *  its old tables, and what they held, alive through scavenges (src/runtime/churn-map.ts). */
  private running: Flight[] = [];
  private roomWaiter: (() => void) | undefined;
  private readonly normal;
  private readonly full;
  /** Set by the first failed sync: the file can no longer promise anything. */
  failed: StorageError | undefined;
  /** Batches committed whose callers still wait for their sync. */
  pending = 0;
  readonly stats = { syncs: 0 };

  /** Off the loop only at durability 'full' on a file (at 'normal' SQLite never fsyncs a
   *  commit anyway; an in-memory database has nothing to sync). */
  static for(db: Database): WalSync | undefined {
    if (db.memory) return undefined;
    if (Number(db.pragma('synchronous', { simple: true })) < 2) return undefined;
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return undefined;
    return new WalSync(db);
  }

  private constructor(private readonly db: Database) {
    this.normal = db.prepare('PRAGMA synchronous = NORMAL');
    this.full = db.prepare('PRAGMA synchronous = FULL');
  }

  /** Runs a group-commit transaction with COMMIT not syncing (the caller then calls after()). */
  relaxed<T>(commit: () => T): T {
    this.normal.run();
    try {
      return commit();
    } finally {
      this.full.run();
    }
  }

  /** Every sync slot is taken: a batch committed now would only wait for one to free up. */
  get saturated(): boolean {
    return this.flights.length >= MAX_IN_FLIGHT;
  }

  /** Calls `then` once, when a sync slot frees up (or the file failed). One waiter: the
   *  commit queue's held flush. */
  whenRoom(then: () => void): void {
    this.roomWaiter = then;
  }

  private room(): void {
    const then = this.roomWaiter;
    this.roomWaiter = undefined;
    then?.();
  }

  /** Settles once every frame committed so far is on disk. */
  after(settle: Settle): void {
    if (this.failed) return settle(this.failed);
    this.pending++;
    this.waiting.push(settle);
    if (this.flights.length < MAX_IN_FLIGHT) this.start();
  }

  private start(): void {
    let fd: number;
    try {
      fd = this.walFd();
    } catch (err) {
      // No -wal to sync (removed under the engine): nothing can be promised any more.
      return this.fail(err as NodeJS.ErrnoException);
    }
    const flight: Flight = { group: this.waiting, fd };
    this.waiting = [];
    this.flights.push(flight);
    this.running.push(flight);
    this.stats.syncs++;
    const ino = this.fdIno;
    const done = (err: NodeJS.ErrnoException | null) => {
      this.release(flight);
      if (this.failed) return; // every caller already heard of the failure
      const at = this.flights.indexOf(flight);
      // Closed meanwhile (only an abandoned engine closes with syncs in flight: a clean close
      // waits for them): no caller is told "stored"; they hear what a closed file tells
      // every later write.
      if (!this.db.open) return this.fail(Object.assign(new Error('the database connection was closed before the commit was synced'), { code: 'ECLOSED' }));
      if (err) return this.fail(err);
      // at < 0: a younger sync already ended and answered this one's group.
      if (at >= 0) {
        for (const f of this.flights.splice(0, at + 1)) {
          this.pending -= f.group.length;
          for (const s of f.group) s();
        }
      }
      if (this.waiting.length > 0 && this.flights.length < MAX_IN_FLIGHT) this.start();
      this.room();
    };
    fdatasync(fd, (e) => {
      if (e || ino === this.syncedIno) return done(e);
      // A new -wal inode: its directory entry must be durable as well.
      open(dirname(`${this.db.name}-wal`), 'r', (e3, dfd) => {
        if (e3) return done(e3);
        fsync(dfd, (e4) => close(dfd, () => {
          if (!e4) this.syncedIno = ino;
          done(e4);
        }));
      });
    });
  }

  /** The descriptor of the file the -wal path names now. The path is looked at on every sync
   *  (a stat on this thread, microseconds): a -wal replaced by a new inode is the one synced. */
  private walFd(): number {
    const wal = `${this.db.name}-wal`;
    const ino = statSync(wal).ino;
    if (this.fd !== undefined && ino === this.fdIno) return this.fd;
    const old = this.fd;
    this.fd = openSync(wal, 'r');
    this.fdIno = fstatSync(this.fd).ino;
    if (old !== undefined && !this.inUse(old)) closeSync(old);
    return this.fd;
  }

  /** A sync ended: its descriptor closes if it was replaced (or the queue closed) and no
   *  other sync still runs on it. */
  private release(flight: Flight): void {
    this.running = this.running.filter((f) => f !== flight);
    const fd = flight.fd;
    if ((fd === this.fd && !this.closed) || this.inUse(fd)) return;
    if (fd === this.fd) this.fd = undefined;
    closeSync(fd);
  }

  private inUse(fd: number): boolean {
    for (const f of this.running) if (f.fd === fd) return true;
    return false;
  }

  /** The queue closed (clean stop: no sync in flight; abandoned: the last one closes it). */
  close(): void {
    this.closed = true;
    if (this.fd !== undefined && !this.inUse(this.fd)) {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }

  private fail(err: NodeJS.ErrnoException): void {
    this.failed = new StorageError(`storage: syncing ${this.db.name}-wal failed (${err.code ?? err.message}); the file can no longer promise durability, stop the engine and check the disk`);
    const all = [...this.flights.flatMap((f) => f.group), ...this.waiting];
    this.flights = [];
    this.waiting = [];
    this.pending = 0;
    for (const s of all) s(this.failed);
    this.room();
  }
}
