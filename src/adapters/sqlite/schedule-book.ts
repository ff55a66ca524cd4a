// Schedules on SQLite: registering the workflows' schedule() triggers as rows, and firing
// due slots. Firing runs INSIDE the caller's transaction: the slot's run (deterministic id
// slotRunId), its ledger row and the schedule's new position commit together, so a crash
// can neither lose a fired slot nor fire it twice. Which slots fire is the pure planSlots().
import { slotRunId } from '../../domain/ids.ts';
import { planSlots, type SlotCalendar } from '../../domain/schedule.ts';
import type { WorkflowRegistry } from '../../runtime/registry.ts';
import { triggerKey } from '../../../sdk/triggers.ts';
import type { SqliteStore } from './store.ts';
import type { ScheduleRow, TriggerTables } from './trigger-tables.ts';

export type CalendarFactory = (cron: string, timezone: string) => SlotCalendar;

/** A slot this late (timer jitter, a busy event loop) still counts as on time. */
export const ON_TIME_GRACE_MS = 60_000;
/** catchUp 'all' starts at most this many runs for one schedule at once. */
export const CATCH_UP_ALL_CAP = 100;

export class ScheduleBook {
  private readonly calendars = new Map<string, SlotCalendar>();

  constructor(
    private readonly store: SqliteStore,
    private readonly tables: TriggerTables,
    private readonly registry: WorkflowRegistry,
    private readonly calendarFor: CalendarFactory,
  ) {}

  /** Upserts a row per registered schedule. A new schedule starts at `now`: slots before
   *  it existed are not "missed". Schedules no longer registered become inactive. */
  register(now: number): void {
    const ids: { id: string; catchUp: 'latest' | 'all' | 'none' }[] = [];
    for (const { definition } of this.registry.all()) {
      for (const t of definition.triggers) {
        if (t.type !== 'schedule') continue;
        const id = `${definition.name}|${triggerKey(t)}`;
        const timezone = t.timezone ?? 'UTC';
        ids.push({ id, catchUp: t.catchUp });
        if (this.tables.schedule(id)) continue;
        const next = this.calendar(t.cron, timezone).nextAfter(now);
        this.tables.insertSchedule({
          id, workflow: definition.name, cron: t.cron, timezone, catch_up: t.catchUp, created_at: now, handled_up_to: now, next_at: next ?? null,
        });
      }
    }
    this.tables.activate(ids);
  }

  /** Inside a transaction: decides every due schedule's slots; returns the runs created. */
  fireDue(now: number): string[] {
    const created: string[] = [];
    for (const row of this.tables.dueSchedules(now)) created.push(...this.fire(row, now));
    return created;
  }

  nextAt(): number | undefined {
    return this.tables.nextScheduleAt();
  }

  private fire(row: ScheduleRow, now: number): string[] {
    const wf = this.registry.find(row.workflow);
    const plan = planSlots({
      after: row.handled_up_to, now, policy: row.catch_up, cap: CATCH_UP_ALL_CAP, graceMs: ON_TIME_GRACE_MS,
      calendar: this.calendar(row.cron, row.timezone),
    });
    const created: string[] = [];
    for (const d of plan.decisions) {
      let runId: string | undefined;
      if ((d.fate === 'fired' || d.fate === 'caught-up') && wf) {
        const slot = new Date(d.at).toISOString();
        runId = slotRunId(row.workflow, slot);
        const input = { slot, fate: d.fate };
        if (this.store.insertRun({ runId, workflow: row.workflow, version: wf.version, input, now })) created.push(runId);
      }
      this.tables.recordSlot({ scheduleId: row.id, at: d.at, fate: d.fate, reason: d.reason, runId, now });
    }
    if (plan.range) {
      const r = plan.range;
      const reason = `${r.atLeast ? 'at least ' : ''}${r.count} more slots: ${r.reason}`;
      this.tables.recordSlot({ scheduleId: row.id, at: r.from, fate: r.fate, reason, count: r.count, until: r.to, now });
    }
    this.tables.advanceSchedule(row.id, plan.handledUpTo, plan.next);
    if (plan.decisions.length > 0) this.tables.pruneSlots(row.id);
    return created;
  }

  private calendar(cron: string, timezone: string): SlotCalendar {
    const key = `${cron}@${timezone}`;
    let c = this.calendars.get(key);
    if (!c) this.calendars.set(key, (c = this.calendarFor(cron, timezone)));
    return c;
  }
}
