// SQL for trigger state (migration 2): schedules and their slot ledger, the event inbox
// views, webhook secrets and engine settings (the webhook port). Synchronous, like
// SqliteStore; works on a read-only connection for the reading methods (CLI while a
// `serve` owns the file). Every opened file is fully migrated (the CLI refuses an older
// schema), so the tables are always there.
import type Database from 'better-sqlite3';
import type { Json } from '../../domain/json.ts';
import { identityCodec, type PayloadCodec } from '../../domain/payload-codec.ts';
import type { CatchUpPolicy, SlotFate } from '../../domain/schedule.ts';
import type { EventFilter, EventView, ScheduleView, SlotFilter, SlotView } from '../../ports/triggers.ts';
import type { SlotRecord } from '../../ports/trigger-store.ts';
import { isoTime } from '../../domain/iso-time.ts';

export interface ScheduleRow {
  id: string;
  workflow: string;
  cron: string;
  timezone: string;
  catch_up: CatchUpPolicy;
  created_at: number;
  handled_up_to: number;
  next_at: number | null;
  active: number;
}

/** Ledger rows kept per schedule; older ones are pruned as new ones arrive. */
const LEDGER_KEEP = 1000;

const iso = isoTime; // not Date#toISOString: it loads ICU's time zone data (iso-time.ts)

export class TriggerTables {
  /** `codec`: event payloads are stored through it (docs/data.md). */
  constructor(readonly db: Database.Database, private readonly codec: PayloadCodec = identityCodec) {}

  // ---- schedules -----------------------------------------------------------------------

  schedule(id: string): ScheduleRow | undefined {
    return this.db.prepare(`SELECT * FROM schedules WHERE id = ?`).get(id) as ScheduleRow | undefined;
  }

  insertSchedule(r: Omit<ScheduleRow, 'active'>): void {
    this.db
      .prepare(`INSERT INTO schedules (id, workflow, cron, timezone, catch_up, created_at, handled_up_to, next_at, active)
                VALUES (@id, @workflow, @cron, @timezone, @catch_up, @created_at, @handled_up_to, @next_at, 1)`)
      .run(r);
  }

  /** Marks exactly the given schedules active (policy refreshed), every other one inactive. */
  activate(ids: readonly { id: string; catchUp: CatchUpPolicy }[]): void {
    this.db.prepare(`UPDATE schedules SET active = 0`).run();
    const on = this.db.prepare(`UPDATE schedules SET active = 1, catch_up = ? WHERE id = ?`);
    for (const s of ids) on.run(s.catchUp, s.id);
  }

  dueSchedules(now: number): ScheduleRow[] {
    return this.db.prepare(`SELECT * FROM schedules WHERE active = 1 AND next_at IS NOT NULL AND next_at <= ? ORDER BY next_at`).all(now) as ScheduleRow[];
  }

  nextScheduleAt(): number | undefined {
    return (this.db.prepare(`SELECT min(next_at) AS at FROM schedules WHERE active = 1 AND next_at IS NOT NULL`).get() as { at: number | null }).at ?? undefined;
  }

  advanceSchedule(id: string, handledUpTo: number, nextAt: number | undefined): void {
    this.db.prepare(`UPDATE schedules SET handled_up_to = ?, next_at = ? WHERE id = ?`).run(handledUpTo, nextAt ?? null, id);
  }

  recordSlot(s: SlotRecord): void {
    this.db
      .prepare(`INSERT INTO schedule_slots (schedule_id, slot_at, fate, reason, run_id, count, until_at, recorded_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (schedule_id, slot_at) DO NOTHING`)
      .run(s.scheduleId, s.at, s.fate, s.reason, s.runId ?? null, s.count ?? 1, s.until ?? null, s.now);
  }

  pruneSlots(scheduleId: string): void {
    this.db
      .prepare(`DELETE FROM schedule_slots WHERE schedule_id = @id AND slot_at < (
                  SELECT slot_at FROM schedule_slots WHERE schedule_id = @id ORDER BY slot_at DESC LIMIT 1 OFFSET ${LEDGER_KEEP - 1})`)
      .run({ id: scheduleId });
  }

  listSchedules(): ScheduleView[] {
    return (this.db.prepare(`SELECT * FROM schedules ORDER BY workflow, id`).all() as ScheduleRow[]).map((r) => {
      const v: ScheduleView = {
        workflow: r.workflow, cron: r.cron, timezone: r.timezone, catchUp: r.catch_up, active: r.active === 1,
        createdAt: iso(r.created_at), handledUpTo: iso(r.handled_up_to),
      };
      if (r.next_at != null) v.nextAt = iso(r.next_at);
      return v;
    });
  }

  /** Newest first. */
  listSlots(filter: SlotFilter): SlotView[] {
    const rows = this.db
      .prepare(`SELECT s.workflow, l.* FROM schedule_slots l JOIN schedules s ON s.id = l.schedule_id
                WHERE (@workflow IS NULL OR s.workflow = @workflow) AND (@fate IS NULL OR l.fate = @fate)
                ORDER BY l.slot_at DESC LIMIT @limit`)
      .all({ workflow: filter.workflow ?? null, fate: filter.fate ?? null, limit: filter.limit ?? 100 }) as {
      workflow: string; slot_at: number; fate: SlotFate; reason: string; run_id: string | null; count: number; until_at: number | null; recorded_at: number;
    }[];
    return rows.map((r) => {
      const v: SlotView = { workflow: r.workflow, slot: iso(r.slot_at), fate: r.fate, reason: r.reason, count: r.count, recordedAt: iso(r.recorded_at) };
      if (r.run_id) v.runId = r.run_id;
      if (r.until_at != null) v.until = iso(r.until_at);
      return v;
    });
  }

  // ---- events ----------------------------------------------------------------------------

  /** Newest first. `unmatched` = events that started no run (no subscriber when published). */
  listEvents(filter: EventFilter): EventView[] {
    const rows = this.db
      .prepare(`SELECT * FROM events WHERE (@name IS NULL OR name = @name) AND (@unmatched = 0 OR run_ids = '[]')
                ORDER BY created_at DESC, rowid DESC LIMIT @limit`)
      .all({ name: filter.name ?? null, unmatched: filter.unmatched ? 1 : 0, limit: filter.limit ?? 100 }) as {
      id: string; name: string; payload: string; created_at: number; run_ids: string;
    }[];
    return rows.map((r) => ({ id: r.id, name: r.name, payload: JSON.parse(this.codec.decode(r.payload)) as Json, createdAt: iso(r.created_at), runIds: JSON.parse(r.run_ids) as string[] }));
  }

  // ---- webhooks and settings -------------------------------------------------------------

  webhookSecret(workflow: string): string | undefined {
    return (this.db.prepare(`SELECT secret FROM webhook_secrets WHERE workflow = ?`).get(workflow) as { secret: string } | undefined)?.secret;
  }

  insertWebhookSecret(workflow: string, secret: string, now: number): void {
    this.db.prepare(`INSERT INTO webhook_secrets (workflow, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (workflow) DO NOTHING`).run(workflow, secret, now);
  }

  setting(key: string): string | undefined {
    return (this.db.prepare(`SELECT value FROM settings WHERE key = ?`).get(key) as { value: string } | undefined)?.value;
  }

  setSetting(key: string, value: string): void {
    this.db.prepare(`INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(key, value);
  }
}
