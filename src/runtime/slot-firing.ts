// Schedules, over the TriggerStore port: registering the workflows' schedule() triggers as
// schedule rows, and firing due slots. Firing runs INSIDE the caller's write: the slot's run
// (deterministic id slotRunId, so the outbox dedups), its ledger row and the schedule's new
// position commit together, so a crash can neither lose a fired slot nor fire it twice.
// Which slots fire is the pure planSlots(); cron arithmetic comes from the Calendar port.
import { deadlineFor } from '../domain/run-control.ts';
import { slotRunId } from '../domain/ids.ts';
import { planSlots, type CatchUpPolicy, type SlotCalendar } from '../domain/schedule.ts';
import type { CalendarFactory } from '../ports/calendar.ts';
import type { OutboxRun, ScheduleRecord, TriggerWrites } from '../ports/trigger-store.ts';
import { triggerKey } from '../../sdk/triggers.ts';
import type { WorkflowRegistry } from './registry.ts';
import type { Debouncer } from '../ports/debounce.ts';
import { joinBurstInWrite } from './debounce.ts';

/** A slot this late (timer jitter, a busy event loop) still counts as on time. */
export const ON_TIME_GRACE_MS = 60_000;
/** catchUp 'all' starts at most this many runs for one schedule at once. */
export const CATCH_UP_ALL_CAP = 100;

export class SlotFiring {
  private readonly calendars = new Map<string, SlotCalendar>();

  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly calendarFor: CalendarFactory,
  ) {}

  /** Inside a write: a row per registered schedule. A new schedule starts at `now`: slots
   *  before it existed are not "missed". Schedules no longer registered become inactive. */
  register(w: TriggerWrites, now: number): void {
    const ids: { id: string; catchUp: CatchUpPolicy }[] = [];
    for (const { definition } of this.registry.all()) {
      for (const t of definition.triggers) {
        if (t.type !== 'schedule') continue;
        const id = `${definition.name}|${triggerKey(t)}`;
        const timezone = t.timezone ?? 'UTC';
        ids.push({ id, catchUp: t.catchUp });
        if (w.schedule(id)) continue;
        const next = this.calendar(t.cron, timezone).nextAfter(now);
        w.insertSchedule({ id, workflow: definition.name, cron: t.cron, timezone, catchUp: t.catchUp, createdAt: now, handledUpTo: now, nextAt: next });
      }
    }
    w.activateSchedules(ids);
  }

  /** Inside a write: decides every due schedule's slots; returns the runs it created. */
  fireDue(w: TriggerWrites, now: number, bursts?: Debouncer): OutboxRun[] {
    const created: OutboxRun[] = [];
    for (const s of w.dueSchedules(now)) this.fire(w, s, now, created, bursts);
    return created;
  }

  private fire(w: TriggerWrites, s: ScheduleRecord, now: number, created: OutboxRun[], bursts: Debouncer | undefined): void {
    const wf = this.registry.find(s.workflow);
    const plan = planSlots({
      after: s.handledUpTo, now, policy: s.catchUp, cap: CATCH_UP_ALL_CAP, graceMs: ON_TIME_GRACE_MS,
      calendar: this.calendar(s.cron, s.timezone),
    });
    for (const d of plan.decisions) {
      let runId: string | undefined;
      if ((d.fate === 'fired' || d.fate === 'caught-up') && wf) {
        const slot = new Date(d.at).toISOString();
        runId = slotRunId(s.workflow, slot);
        const debounce = wf.definition.debounce;
        if (debounce) {
          // A debounced workflow's slot joins its burst (the slot's run id dedups); the
          // ledger says so, or why it could not (its key function threw).
          const refused = joinBurstInWrite(bursts, w, { workflow: s.workflow, spec: debounce, input: { slot, fate: d.fate }, dedupId: runId, what: `schedule slot ${slot}` }, now);
          w.recordSlot({ scheduleId: s.id, at: d.at, fate: refused ? 'skipped' : d.fate, reason: refused ?? `${d.reason}; joined a debounce burst (its run starts when the burst is due)`, now });
          continue;
        }
        const run: OutboxRun = { runId, workflow: s.workflow, version: wf.version, input: { slot, fate: d.fate }, deadlineAt: deadlineFor(now, wf.definition.timeoutMs) };
        if (w.insertRun(run, now)) created.push(run);
      }
      w.recordSlot({ scheduleId: s.id, at: d.at, fate: d.fate, reason: d.reason, runId, now });
    }
    if (plan.range) {
      const r = plan.range;
      const reason = `${r.atLeast ? 'at least ' : ''}${r.count} more slots: ${r.reason}`;
      w.recordSlot({ scheduleId: s.id, at: r.from, fate: r.fate, reason, count: r.count, until: r.to, now });
    }
    w.advanceSchedule(s.id, plan.handledUpTo, plan.next);
    if (plan.decisions.length > 0) w.pruneSlots(s.id);
  }

  private calendar(cron: string, timezone: string): SlotCalendar {
    const key = `${cron}@${timezone}`;
    let c = this.calendars.get(key);
    if (!c) this.calendars.set(key, (c = this.calendarFor(cron, timezone)));
    return c;
  }
}
