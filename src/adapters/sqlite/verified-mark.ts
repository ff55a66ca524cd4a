// Start after a crash without reading the whole file, and without trusting anything the
// engine did not write itself. `tranquil.db.verified` holds the identity (device, inode,
// size, ctime: see store.ts identity()) of the database file as this engine last left it.
//
// In WAL mode the engine changes the main file only by checkpointing, and the owner runs
// every checkpoint itself (wal_autocheckpoint = 0 on its connections; Checkpoints below, after
// a group commit, once ~4 MB of the -wal are not yet in the file). The checkpoint runs on a
// worker thread with its own connection (checkpoint-thread.ts, checkpoint-worker.ts), which
// does the three steps below back to back; on the main thread only if that worker cannot
// start, or with TRANQUIL_CHECKPOINT=inline. Around each checkpoint:
//   - before: the file must still be as last recorded; if not, something else changed it, the
//     mark is deleted and not written again by this engine (the next start checks it all);
//   - after: SQLite has synced the file (NORMAL and FULL both sync it after a checkpoint);
//     its new identity is recorded (written to a temp file and renamed over the mark).
// At open, a file whose identity equals the mark has not had a byte changed since the engine
// last wrote it (ctime moves on any write, truncate or rename over it and cannot be set back),
// so the whole-file quick_check is skipped, as after a clean stop. The -wal past the last
// checkpoint is the engine's own, checksummed frame by frame by SQLite. Any doubt (no mark,
// an unreadable mark, another identity) means the full check, as before.
//
// A SIGKILL while a checkpoint runs leaves the mark of the previous one: the checkpoint has
// changed the file (ctime, size), so the mark no longer matches and the next start runs the
// full check. No mark ever names an identity the file had before a checkpoint that then
// changed it (the mark is renewed only after the checkpoint returned, synced).
import type { Database } from 'better-sqlite3';
import { closeSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { CheckpointThread, type CheckpointReply, type CheckpointThreadOptions } from './checkpoint-thread.ts';
import { identity } from './store.ts';

const markOf = (file: string) => `${file}.verified`;
const firstLine = (s: string) => s.split('\n')[0]!;
/** Bytes of -wal not yet in the file past which the owner checkpoints (SQLite's default
 *  autocheckpoint: 1000 pages). */
const CHECKPOINT_WAL_BYTES = 4 * 1024 * 1024;

/** True when the file is exactly as its engine last recorded it. Never consumes the mark. */
export function vouched(file: string): boolean {
  try {
    return readFileSync(markOf(file), 'utf8') === identity(file);
  } catch {
    return false;
  }
}

/** The owner's checkpoints and the mark they keep (one per open connection of the owner). */
export class Checkpoints {
  private last: string | undefined;
  private readonly file: string;
  private disowned = false;
  /** The worker; undefined when checkpoints run on this thread (inline, or it cannot start). */
  private thread: CheckpointThread | undefined;
  private inFlight: Promise<void> | undefined;
  /** Not-yet-checkpointed bytes at which the next checkpoint starts (raised after a failure). */
  private dueAt = CHECKPOINT_WAL_BYTES;
  private failureLogged = false;
  private abandoned = false;
  private closing = false;
  /** Set while the last pass runs: the group commit's next flush waits (see wait()). */
  private held: (() => void)[] | undefined;
  private readonly wal: WalBacklog;
  /** `checkpoints`: started (a worker's may still run); `done`: completed; `failed`: errors;
   *  `inline`: run on the main thread; `restarts`: last passes after which the worker made the
   *  first write (the -wal restart and its header's fsync, off this thread). */
  readonly stats = { checkpoints: 0, done: 0, failed: 0, inline: 0, restarts: 0 };

  /** `inline`: on the main thread (default: TRANQUIL_CHECKPOINT=inline); `thread`: options of
   *  the worker (tests: a driver that does not load, a short idle time). */
  static for(db: Database, opts: { inline?: boolean; thread?: CheckpointThreadOptions } = {}): Checkpoints | undefined {
    if (db.memory || db.readonly) return undefined;
    return new Checkpoints(db, opts.inline ?? process.env.TRANQUIL_CHECKPOINT === 'inline', opts.thread);
  }

  private constructor(private readonly db: Database, inline: boolean, threadOptions?: CheckpointThreadOptions) {
    this.file = db.name;
    db.pragma('wal_autocheckpoint = 0');
    this.wal = new WalBacklog(this.file);
    if (!inline) this.thread = new CheckpointThread(this.file, threadOptions);
    this.record();
  }

  /** The worker, when checkpoints run on one (tests: its thread count, the held hook). */
  get worker(): CheckpointThread | undefined {
    return this.thread;
  }

  /** After a group commit: checkpoint once enough of the -wal is not yet in the file. Starts
   *  the worker's checkpoint and returns at once; at most one is in flight. */
  afterCommit(): void {
    if (this.inFlight || this.abandoned || this.closing) return;
    const backlog = this.wal.backlogBytes();
    if (backlog < this.dueAt) return;
    // A change seen already is acted on now (the worker checks again right before it copies).
    if (!this.disowned && this.current() !== this.last) this.disown();
    this.stats.checkpoints++;
    if (!this.thread) return this.inline(backlog);
    this.inFlight = this.thread.run({ last: this.last, disowned: this.disowned }).then((r) => this.answered(r, backlog, false));
  }

  /** The group commit asks before each flush: true = held (a last pass runs); `resume` is
   *  called once it ended. The event loop is never blocked: writes just queue meanwhile. */
  wait(resume: () => void): boolean {
    if (!this.held) return false;
    this.held.push(resume);
    return true;
  }

  /** SQLite restarts the -wal from its start only when a writer finds EVERY frame already in
   *  the file. A worker's checkpoint runs while the main connection keeps committing, so it
   *  always ends a few frames short and the -wal would grow without end (and with it the
   *  recovery after a crash, which replays every valid frame). So once it is nearly caught
   *  up, one more PASSIVE pass runs with the group commit's flushes held for it (a few ms:
   *  what was committed during the first pass; the event loop runs on, writes just queue);
   *  then the worker makes the first write, which restarts the -wal (checkpoint-worker.ts).
   *  Not TRUNCATE/RESTART: after those too, the next writer (the main thread) writes and
   *  syncs the new header. The worker's write changes the wal-index header, so the main
   *  thread's transactions outside the group commit begin IMMEDIATE (store.ts transaction()):
   *  a deferred one that read before that write would fail to write (SQLITE_BUSY_SNAPSHOT). */
  private lastPass(thread: CheckpointThread): void {
    const backlog = this.wal.backlogBytes();
    if (backlog === 0 || this.closing) return;
    this.held = [];
    this.stats.checkpoints++;
    this.inFlight = thread.run({ last: this.last, disowned: this.disowned, final: true }).then((r) => {
      this.release();
      this.answered(r, backlog, true);
    });
  }

  private release(): void {
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const resume of waiting) resume();
  }

  /** Resolves once no checkpoint is in flight (including a last pass that follows one). */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Waits for the checkpoint in flight, then ends the worker (a clean stop: the owner's
   *  connection then closes last). */
  async close(): Promise<void> {
    // Commits after this are checkpointed by the owner's last close, not by a new worker.
    this.closing = true;
    await this.idle();
    await this.thread?.close();
    this.wal.close();
  }

  /** A simulated crash: nothing more is written, the worker ends without keeping the process. */
  abandon(): void {
    this.abandoned = true;
    this.release();
    this.thread?.abandon();
    this.wal.close();
  }

  private answered(r: CheckpointReply, backlog: number, last: boolean): void {
    this.inFlight = undefined;
    if (this.abandoned) return;
    if (r.type === 'unavailable') {
      // The worker cannot run here: every later checkpoint runs on this thread, as before.
      console.error(`tranquil: the checkpoint worker could not start (${firstLine(r.message)}); checkpoints run on the main thread`);
      this.thread = undefined;
      return this.inline(backlog);
    }
    if (r.disowned && !this.disowned) this.disown();
    if (!this.disowned) this.last = r.last;
    if (r.type === 'done') {
      this.stats.done++;
      if (r.restarted) this.stats.restarts++;
      this.dueAt = CHECKPOINT_WAL_BYTES;
      if (!last && this.thread) this.lastPass(this.thread);
      return;
    }
    // Not fatal (the -wal keeps every frame; SQLite retries at the next checkpoint): logged
    // once, retried once another threshold's worth of -wal has accumulated.
    this.stats.failed++;
    this.dueAt = backlog + CHECKPOINT_WAL_BYTES;
    if (!this.failureLogged) console.error(`tranquil: a WAL checkpoint failed (${r.code ?? firstLine(r.message)}); retried later`);
    this.failureLogged = true;
  }

  /** The checkpoint on this thread (the shape before the worker). */
  private inline(backlog: number): void {
    this.stats.inline++;
    try {
      if (!this.disowned && this.current() !== this.last) this.disown();
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      this.answered({ type: 'error', message: (err as Error).message, code: (err as { code?: string }).code, last: this.last, disowned: this.disowned }, backlog, true);
      return;
    }
    this.stats.done++;
    this.dueAt = CHECKPOINT_WAL_BYTES;
    if (!this.disowned) this.record();
  }

  private current(): string | undefined {
    try {
      return identity(this.file);
    } catch {
      return undefined;
    }
  }

  private record(): void {
    this.last = this.current();
    if (this.last === undefined) return this.disown();
    try {
      const tmp = `${markOf(this.file)}.tmp`;
      writeFileSync(tmp, this.last, { mode: 0o600 });
      renameSync(tmp, markOf(this.file));
    } catch {
      this.disown();
    }
  }

  /** The file changed under us (or the mark cannot be kept): the next start checks it all. */
  private disown(): void {
    this.disowned = true;
    try {
      unlinkSync(markOf(this.file));
    } catch {
      // already gone
    }
  }
}

/** How much of the -wal is not yet in the database file: read from the wal-index header in
 *  the -shm (https://sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at 96, native
 *  byte order). The -wal's size cannot say it: SQLite reuses the file from its start after a
 *  complete checkpoint without shrinking it, so once it reached 4 MB its size stayed there and
 *  every later commit checkpointed. Falls back to that size if the -shm cannot be read. */
class WalBacklog {
  private fd: number | undefined;
  private readonly buf = Buffer.alloc(100);
  private readonly le = endianness() === 'LE';

  constructor(private readonly file: string) {}

  backlogBytes(): number {
    try {
      this.fd ??= openSync(`${this.file}-shm`, 'r');
      if (readSync(this.fd, this.buf, 0, 100, 0) === 100) {
        const u32 = (o: number) => (this.le ? this.buf.readUInt32LE(o) : this.buf.readUInt32BE(o));
        const u16 = (o: number) => (this.le ? this.buf.readUInt16LE(o) : this.buf.readUInt16BE(o));
        if (u32(0) === 3007000 && this.buf[12] === 1) {
          const page = u16(14) === 1 ? 65536 : u16(14);
          return Math.max(0, u32(16) - u32(96)) * (page + 24);
        }
      }
    } catch {
      // no -shm to read: the size below
    }
    try {
      return statSync(`${this.file}-wal`).size;
    } catch {
      return 0;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // closed already
    }
    this.fd = undefined;
  }
}
