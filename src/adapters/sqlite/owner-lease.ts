// One engine owns a data dir at a time. The owner row holds a heartbeat; a second engine
// is refused while the owner is alive. After a crash the row is stale: on the same host a
// dead PID is taken over at once, otherwise once the heartbeat is older than the TTL.
// Heartbeats use the wall clock on purpose: ownership is about real processes, not run time.
import { hostname } from 'node:os';
import { DataDirInUseError } from '../../domain/errors.ts';
import { pidAlive } from '../../platform/pid.ts';
import type { Database, Statement } from 'better-sqlite3';
import { isoTime } from '../../domain/iso-time.ts';

interface OwnerRow {
  owner_id: string;
  pid: number;
  host: string;
  heartbeat_at: number;
}


export class OwnerLease {
  private timer: NodeJS.Timeout | undefined;
  private readonly host = hostname();
  /** [relax, restore] the sync level around a beat (see acquire). */
  private levels: [Statement, Statement] | undefined;

  constructor(
    private readonly db: Database,
    readonly ownerId: string,
    private readonly ttlMs = 15_000,
  ) {}

  acquire(): void {
    const db = this.db;
    db.transaction(() => {
      const row = db.prepare(`SELECT * FROM owner WHERE id = 1`).get() as OwnerRow | undefined;
      if (row && row.owner_id !== this.ownerId && this.alive(row)) {
        throw new DataDirInUseError(row.pid, row.host);
      }
      db.prepare(
        `INSERT INTO owner (id, owner_id, pid, host, heartbeat_at) VALUES (1, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET owner_id = excluded.owner_id, pid = excluded.pid, host = excluded.host, heartbeat_at = excluded.heartbeat_at`,
      ).run(this.ownerId, process.pid, this.host, Date.now());
    }).immediate();
    // Beats commit at NORMAL when the file runs at FULL: a beat's fsync ran on the host's event
    // loop every few seconds, and a beat lost with the machine tells nothing wrong (its owner
    // is gone too). The group commit's or a checkpoint's next sync makes it durable anyway.
    const level = Number(db.pragma('synchronous', { simple: true }));
    if (level >= 2 && !db.memory) this.levels = [db.prepare('PRAGMA synchronous = NORMAL'), db.prepare(`PRAGMA synchronous = ${level}`)];
    this.timer = setInterval(() => this.beat(), Math.max(200, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  /** Fault injection: stop heartbeating and leave the row, as a process that died would. */
  abandon(): void {
    clearInterval(this.timer);
  }

  release(): void {
    clearInterval(this.timer);
    if (this.db.open) this.db.prepare(`DELETE FROM owner WHERE id = 1 AND owner_id = ?`).run(this.ownerId);
  }

  private alive(row: OwnerRow): boolean {
    if (row.host === this.host) return pidAlive(row.pid) && Date.now() - row.heartbeat_at < this.ttlMs * 4;
    return Date.now() - row.heartbeat_at < this.ttlMs;
  }

  private beat(): void {
    try {
      this.levels?.[0].run();
      this.db.prepare(`UPDATE owner SET heartbeat_at = ? WHERE id = 1 AND owner_id = ?`).run(Date.now(), this.ownerId);
    } catch {
      // A busy or closing database: the next beat retries; expiry only matters to another host.
    } finally {
      try {
        this.levels?.[1].run();
      } catch {
        // closing: nothing commits after this
      }
    }
  }
}

/** Who owns a data dir's file, read without taking it (the CLI's `why`): `none` after a clean
 *  stop, `stale` when the owner's pid is gone (same host) or its heartbeat is older than the
 *  TTL, by the rule acquire() applies. */
export function readOwner(db: Database, ttlMs = 15_000): { state: 'alive' | 'none' | 'stale'; pid?: number; host?: string; heartbeatAt?: string } {
  const row = db.prepare(`SELECT * FROM owner WHERE id = 1`).get() as OwnerRow | undefined;
  if (!row) return { state: 'none' };
  const sameHost = row.host === hostname();
  const alive = sameHost ? pidAlive(row.pid) && Date.now() - row.heartbeat_at < ttlMs * 4 : Date.now() - row.heartbeat_at < ttlMs;
  return { state: alive ? 'alive' : 'stale', pid: row.pid, host: row.host, heartbeatAt: isoTime(row.heartbeat_at) };
}
