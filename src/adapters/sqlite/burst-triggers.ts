// The debounce_triggers table (migration 17; docs/flow-control.md, Debounce): each debounced
// trigger of an event, a schedule slot or a webhook delivery, once per dedup id, with the
// burst it joined. The row is both the dedup record (a redelivery finds it and changes
// nothing) and, on the Restate backend, the outbox of a trigger not yet pushed to its burst.
import type Database from 'better-sqlite3';
import type { Json } from '../../domain/json.ts';
import type { PayloadCodec } from '../../domain/payload-codec.ts';
import type { BurstTrigger } from '../../ports/debounce.ts';

/** Joined rows are kept this long for dedup (a redelivery later than this joins again). */
export const BURST_DEDUP_KEEP_MS = 7 * 24 * 3600_000;

interface Row {
  dedup_id: string;
  workflow: string;
  key: string;
  input: string;
  period_ms: number;
  max_wait_ms: number | null;
  run_id: string;
  traceparent: string | null;
  joined_run: string | null;
}

export class BurstTriggerTable {
  private readonly s;

  constructor(db: Database.Database, private readonly codec: PayloadCodec) {
    this.s = {
      get: db.prepare(`SELECT joined_run FROM debounce_triggers WHERE dedup_id = ?`),
      insert: db.prepare(`INSERT INTO debounce_triggers (dedup_id, workflow, key, input, period_ms, max_wait_ms, run_id, traceparent, joined_run, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedup_id) DO NOTHING`),
      joined: db.prepare(`UPDATE debounce_triggers SET joined_run = ? WHERE dedup_id = ?`),
      unjoined: db.prepare(`SELECT * FROM debounce_triggers WHERE joined_run IS NULL ORDER BY created_at, rowid LIMIT ?`),
      prune: db.prepare(`DELETE FROM debounce_triggers WHERE rowid IN (SELECT rowid FROM debounce_triggers WHERE joined_run IS NOT NULL AND created_at < ? LIMIT 100)`),
    };
  }

  get(dedupId: string): { joinedRun?: string } | undefined {
    const r = this.s.get.get(dedupId) as { joined_run: string | null } | undefined;
    return r && (r.joined_run === null ? {} : { joinedRun: r.joined_run });
  }

  record(t: BurstTrigger, joinedRun: string | undefined, now: number): void {
    this.s.prune.run(now - BURST_DEDUP_KEEP_MS);
    this.s.insert.run(t.dedupId, t.workflow, t.key, this.codec.encode(JSON.stringify(t.input)), t.periodMs, t.maxWaitMs ?? null, t.runId, t.traceparent ?? null, joinedRun ?? null, now);
  }

  markJoined(dedupId: string, runId: string): void {
    this.s.joined.run(runId, dedupId);
  }

  unjoined(limit: number): BurstTrigger[] {
    return (this.s.unjoined.all(limit) as Row[]).map((r) => ({
      dedupId: r.dedup_id, workflow: r.workflow, key: r.key, input: JSON.parse(this.codec.decode(r.input)) as Json, periodMs: r.period_ms,
      ...(r.max_wait_ms !== null ? { maxWaitMs: r.max_wait_ms } : {}), runId: r.run_id, ...(r.traceparent ? { traceparent: r.traceparent } : {}),
    }));
  }
}
