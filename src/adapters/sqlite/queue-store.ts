// Flow-control state in the SQLite file (src/ports/queue-store.ts): queue definitions, step
// bodies waiting for a slot (their place survives a restart), slots held, and the starts a
// rate limit counts. The tables are schema migration 12 (schema.ts); readers open only a file
// at the current version. Writes go through the commit queue (durable when answered).
import type Database from 'better-sqlite3';
import type { QueueLimits, QueueWait } from '../../domain/rate-limit.ts';
import { SUMMARY_KEYS, type QueueSummary } from '../../domain/queue-summary.ts';
import type { HoldRows, QueuedStep, QueueStore, RecoveredQueues } from '../../ports/queue-store.ts';
import type { CommitQueue } from './commit-queue.ts';

interface Row {
  run_id: string;
  step: string;
  queue: string;
  key: string;
  ord: number;
  at: number;
  priority?: number;
}

const FINISHED = `('succeeded', 'failed', 'cancelled')`;

export class SqliteQueueStore implements QueueStore {
  private readonly s;

  constructor(
    private readonly db: Database.Database,
    private readonly commits: CommitQueue,
  ) {
    this.s = {
      define: db.prepare(`INSERT INTO queue_defs (name, limits, updated_at) VALUES (?, ?, ?)
                          ON CONFLICT (name) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`),
      wait: db.prepare(`INSERT OR IGNORE INTO queue_waiting (run_id, step, queue, key, ord, at, priority) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      unwait: db.prepare(`DELETE FROM queue_waiting WHERE run_id = ? AND step = ?`),
      hold: db.prepare(`INSERT OR REPLACE INTO queue_slots (run_id, step, queue, key, ord, at) VALUES (?, ?, ?, ?, ?, ?)`),
      unhold: db.prepare(`DELETE FROM queue_slots WHERE run_id = ? AND step = ?`),
      start: db.prepare(`INSERT INTO queue_starts (queue, key, at) VALUES (?, ?, ?)`),
      prune: db.prepare(`DELETE FROM queue_starts WHERE queue = ? AND at <= ?`),
      restamp: db.prepare(`UPDATE queue_starts SET at = ? WHERE rowid = (SELECT rowid FROM queue_starts WHERE queue = ? AND key = ? AND at = ? LIMIT 1)`),
    };
  }

  define(queues: { name: string; limits: QueueLimits }[], now: number): Promise<void> {
    return this.commits.enqueue(() => {
      for (const q of queues) this.s.define.run(q.name, JSON.stringify(q.limits), now);
    });
  }

  recover(startsSince: number): RecoveredQueues {
    const db = this.db;
    return db.transaction((): RecoveredQueues => {
      // The last owner is gone (its lease was taken over): the slots it held are free, and
      // their bodies, which never recorded an end, are first in line again.
      // A run's own slot (step '', or '#singleton': run-flow.ts) is held from its start to its
      // end: kept while it is unfinished.
      db.exec(`DELETE FROM queue_slots WHERE run_id NOT IN (SELECT run_id FROM runs WHERE status NOT IN ${FINISHED})`);
      db.exec(`INSERT OR IGNORE INTO queue_waiting (run_id, step, queue, key, ord, at) SELECT run_id, step, queue, key, ord, at FROM queue_slots WHERE step <> '' AND step NOT LIKE '#%'; DELETE FROM queue_slots WHERE step <> '' AND step NOT LIKE '#%';`);
      db.exec(`DELETE FROM queue_waiting WHERE run_id NOT IN (SELECT run_id FROM runs WHERE status NOT IN ${FINISHED})`);
      db.prepare(`DELETE FROM queue_starts WHERE at <= ?`).run(startsSince);
      const rows = db.prepare(`SELECT * FROM queue_waiting ORDER BY ord`).all() as Row[];
      const starts = db.prepare(`SELECT queue, key, at FROM queue_starts ORDER BY at`).all() as { queue: string; key: string; at: number }[];
      const held = db.prepare(`SELECT * FROM queue_slots ORDER BY ord`).all() as Row[];
      const toStep = (r: Row) => ({ runId: r.run_id, step: r.step, queue: r.queue, key: r.key, order: r.ord, at: r.at, ...(r.priority ? { priority: r.priority } : {}) });
      return {
        held: held.map(toStep),
        waiting: rows.map(toStep),
        starts,
        maxOrder: [...rows, ...held].reduce((m, r) => Math.max(m, r.ord), 0),
      };
    }).immediate();
  }

  wait(w: QueuedStep): Promise<void> {
    return this.commits.enqueue(() => void this.s.wait.run(w.runId, w.step, w.queue, w.key, w.order, w.at, w.priority ?? 0));
  }

  grant(w: QueuedStep, now: number, countStart: boolean): Promise<void> {
    return this.commits.enqueue(() => {
      this.s.unwait.run(w.runId, w.step);
      this.s.hold.run(w.runId, w.step, w.queue, w.key, w.order, now);
      if (countStart) this.s.start.run(w.queue, w.key, now);
    });
  }

  release(runId: string, step: string): void {
    // Not awaited: a release lost in a crash is made by the next owner's recover.
    this.commits.enqueue(() => void this.s.unhold.run(runId, step)).catch(() => {});
  }

  writeHolds(take: () => HoldRows): void {
    this.commits.enqueue(() => {
      const { add, drop } = take();
      for (const w of add) this.s.hold.run(w.runId, w.step, w.queue, w.key, w.order, w.at);
      for (const d of drop) this.s.unhold.run(d.runId, d.step);
    }).catch(() => {});
  }

  leave(runId: string, step: string): void {
    this.commits.enqueue(() => void this.s.unwait.run(runId, step)).catch(() => {});
  }

  restamp(queue: string, key: string, from: number, to: number): void {
    // Not awaited: a crash before it leaves the grant's time, which is never later.
    this.commits.enqueue(() => void this.s.restamp.run(to, queue, key, from)).catch(() => {});
  }

  prune(queue: string, before: number): void {
    this.commits.enqueue(() => void this.s.prune.run(queue, before)).catch(() => {});
  }
}

/** Read-only views for `why` and `tranquil queues` (another process may own the file). */
export function readQueues(db: Database.Database): { name: string; limits: QueueLimits; running: number; waiting: number }[] {
  const defs = db.prepare(`SELECT name, limits FROM queue_defs ORDER BY name`).all() as { name: string; limits: string }[];
  const count = (table: string) => new Map((db.prepare(`SELECT queue, count(*) AS n FROM ${table} GROUP BY queue`).all() as { queue: string; n: number }[]).map((r) => [r.queue, r.n]));
  const running = count('queue_slots');
  const waiting = count('queue_waiting');
  return defs.map((d) => ({ name: d.name, limits: JSON.parse(d.limits) as QueueLimits, running: running.get(d.name) ?? 0, waiting: waiting.get(d.name) ?? 0 }));
}

/** One queue with its keys (running and waiting per key, the busiest first), for `queues describe`. */
export function readQueue(db: Database.Database, name: string): { name: string; limits: QueueLimits; running: number; waiting: number; keys: { key: string; running: number; waiting: number }[] } | undefined {
  const q = readQueues(db).find((d) => d.name === name);
  if (!q) return undefined;
  const rows = db.prepare(`SELECT key, sum(r) AS running, sum(w) AS waiting FROM (
                             SELECT key, 1 AS r, 0 AS w FROM queue_slots WHERE queue = ?
                             UNION ALL SELECT key, 0, 1 FROM queue_waiting WHERE queue = ?)
                           GROUP BY key ORDER BY running + waiting DESC, key LIMIT 50`).all(name, name) as { key: string; running: number; waiting: number }[];
  return { ...q, keys: rows };
}

/** Every queue an engine declared, with its busiest keys (at most SUMMARY_KEYS) and, with a
 *  queue-wide rate limit, the starts its window counts at `now` (engine.queues.list, the panel). */
export function readQueueSummaries(db: Database.Database, now: number): QueueSummary[] {
  const keys = db.prepare(`SELECT key, sum(r) AS running, sum(w) AS waiting FROM (
                             SELECT key, 1 AS r, 0 AS w FROM queue_slots WHERE queue = ?
                             UNION ALL SELECT key, 0, 1 FROM queue_waiting WHERE queue = ?)
                           GROUP BY key ORDER BY running + waiting DESC, key LIMIT ${SUMMARY_KEYS}`);
  const keyCount = db.prepare(`SELECT count(*) AS n FROM (SELECT key FROM queue_slots WHERE queue = ? UNION SELECT key FROM queue_waiting WHERE queue = ?)`);
  const starts = db.prepare(`SELECT count(*) AS n FROM queue_starts WHERE queue = ? AND at > ?`);
  return readQueues(db).map((q) => {
    const rate = q.limits.rate;
    return {
      ...q,
      keys: keys.all(q.name, q.name) as QueueSummary['keys'],
      keyCount: (keyCount.get(q.name, q.name) as { n: number }).n,
      ...(rate ? { started: (starts.get(q.name, now - rate.periodMs) as { n: number }).n } : {}),
    };
  });
}

/** The step of `runId` waiting for a slot, as `why` says it. */
export function readSlotWait(db: Database.Database, runId: string): QueueWait | undefined {
  const w = db.prepare(`SELECT * FROM queue_waiting WHERE run_id = ? ORDER BY ord LIMIT 1`).get(runId) as Row | undefined;
  if (!w) return undefined;
  const def = db.prepare(`SELECT limits FROM queue_defs WHERE name = ?`).get(w.queue) as { limits: string } | undefined;
  const limits = def ? (JSON.parse(def.limits) as QueueLimits) : {};
  const perKey = limits.key?.concurrency !== undefined;
  const running = perKey
    ? (db.prepare(`SELECT count(*) AS n FROM queue_slots WHERE queue = ? AND key = ?`).get(w.queue, w.key) as { n: number }).n
    : (db.prepare(`SELECT count(*) AS n FROM queue_slots WHERE queue = ?`).get(w.queue) as { n: number }).n;
  // Ahead: the same key's waiters of a higher priority, or of the same and an earlier place.
  const ahead = (db.prepare(`SELECT count(*) AS n FROM queue_waiting WHERE queue = ? AND key = ? AND (priority > ? OR (priority = ? AND ord < ?))`).get(w.queue, w.key, w.priority, w.priority, w.ord) as { n: number }).n;
  return { queue: w.queue, key: w.key, step: w.step, running, limit: perKey ? limits.key!.concurrency : limits.concurrency, ahead };
}
