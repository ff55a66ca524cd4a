// Start after a crash without reading the whole file, and without trusting anything the
// engine did not write itself. `tranquil.db.verified` holds the identity (device, inode,
// size, ctime: see store.ts identity()) of the database file as this engine last left it.
//
// In WAL mode the engine changes the main file only by checkpointing, and the owner runs
// every checkpoint itself (wal_autocheckpoint = 0 on its connection; Checkpoints below, after
// a group commit, once the -wal passed ~4 MB). Around each checkpoint:
//   - before: the file must still be as last recorded; if not, something else changed it, the
//     mark is deleted and not written again by this engine (the next start checks it all);
//   - after: SQLite has synced the file (NORMAL and FULL both sync it after a checkpoint);
//     its new identity is recorded (written to a temp file and renamed over the mark).
// At open, a file whose identity equals the mark has not had a byte changed since the engine
// last wrote it (ctime moves on any write, truncate or rename over it and cannot be set back),
// so the whole-file quick_check is skipped, as after a clean stop. The -wal past the last
// checkpoint is the engine's own, checksummed frame by frame by SQLite. Any doubt (no mark,
// an unreadable mark, another identity) means the full check, as before.
import type { Database } from 'better-sqlite3';
import { readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { identity } from './store.ts';

const markOf = (file: string) => `${file}.verified`;
/** The -wal size past which the owner checkpoints (SQLite's default autocheckpoint: 1000 pages). */
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
  readonly stats = { checkpoints: 0 };

  static for(db: Database): Checkpoints | undefined {
    if (db.memory || db.readonly) return undefined;
    return new Checkpoints(db);
  }

  private constructor(private readonly db: Database) {
    this.file = db.name;
    db.pragma('wal_autocheckpoint = 0');
    this.record();
  }

  /** After a group commit: checkpoint once the -wal is large. */
  afterCommit(): void {
    let walBytes: number;
    try {
      walBytes = statSync(`${this.file}-wal`).size;
    } catch {
      return;
    }
    if (walBytes < CHECKPOINT_WAL_BYTES) return;
    if (!this.disowned && this.current() !== this.last) this.disown();
    this.db.pragma('wal_checkpoint(PASSIVE)');
    this.stats.checkpoints++;
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
