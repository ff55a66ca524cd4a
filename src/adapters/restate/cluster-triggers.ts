// Triggers kept in Restate instead of the local file (`restate.triggers: 'restate'`): what
// several engine replicas of one app must agree on lives in virtual objects every replica
// reaches, so no replica's data dir holds anything correctness depends on.
//
// - `tqsched`, one object per schedule (key `<workflow>|schedule:<cron>@<tz>`): Restate has no
//   cron, so the object fires each due slot and re-arms itself with a delayed send to its own
//   `tick`. Which slots fire is the same pure planSlots() as on SQLite (catch-up policies
//   included), over the object's own `handledUpTo`; a fired slot starts the workflow with the
//   deterministic run id slotRunId(), so even a repeated tick cannot start it twice. Exactly
//   one timer chain per schedule: a tick whose `at` is not the object's `armedAt` is stale
//   and ends its chain; `ensure` (every replica calls it at start) arms only when nothing is
//   armed. The slot ledger is the object's state (newest LEDGER_KEEP rows).
// - `tqinbox`, one object per event id: `publish` records the event once and starts one run
//   per subscriber (eventRunId(), deterministic) from inside the object, so a second publish
//   of the id, from any replica and at any later time, returns the first one's runs. Object
//   state does not expire (ingress idempotency keys do, after a day; workflow ids after the
//   runs' 7-day retention): the dedup is permanent.
// - `tqsecret`, one object per workflow: its webhook secret, minted once (32 random bytes
//   inside a journaled ctx.run), the same for every replica.
//
// Reads (schedules, slots, events) are admin SQL over these objects' state.
import './polyfill.ts';
import { randomBytes } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { BackendUnavailableError, ValidationError } from '../../domain/errors.ts';
import { eventRunId, slotRunId } from '../../domain/ids.ts';
import type { Json } from '../../domain/json.ts';
import { planSlots, type CatchUpPolicy, type SlotFate } from '../../domain/schedule.ts';
import type { CalendarFactory } from '../../ports/calendar.ts';
import type { EventFilter, EventView, ScheduleView, SlotFilter, SlotView } from '../../ports/triggers.ts';
import type { OutboxEntry, ScheduleRecord } from '../../ports/trigger-store.ts';
import type { WorkflowRegistry } from '../../runtime/registry.ts';
import { CATCH_UP_ALL_CAP, ON_TIME_GRACE_MS } from '../../runtime/slot-firing.ts';
import { triggerKey } from '../../../sdk/triggers.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import { retryWhileUnknown } from './deployments.ts';
import { httpJson } from './http-json.ts';
import { serviceName } from './workflow-service.ts';

export const SCHEDULES = 'tqsched';
export const INBOX = 'tqinbox';
export const SECRETS = 'tqsecret';
/** Ledger rows kept per schedule (newest). */
export const LEDGER_KEEP = 200;

const json = restate.serde.json;

/** A schedule's object state: the trigger store's record (keyed by the object, so no id). */
interface ScheduleState extends Omit<ScheduleRecord, 'id'> {
  /** The `at` of the one pending tick; absent = nothing armed (inactive, or no next slot). */
  armedAt?: number;
}

interface LedgerRow {
  at: number;
  fate: SlotFate;
  reason: string;
  runId?: string;
  count: number;
  until?: number;
  recordedAt: number;
}

interface EnsureRequest {
  workflow: string;
  cron: string;
  timezone: string;
  catchUp: CatchUpPolicy;
}

interface StoredEvent {
  id: string;
  name: string;
  payload: Json;
  createdAt: number;
  runIds: string[];
}

export interface PublishRequest {
  name: string;
  payload: Json;
}

/** The three objects, served by every replica's endpoint. */
export function buildClusterTriggers(registry: WorkflowRegistry, calendar: CalendarFactory) {
  const stillRegistered = (s: ScheduleState): boolean =>
    registry.find(s.workflow)?.definition.triggers.some((t) => t.type === 'schedule' && t.cron === s.cron && (t.timezone ?? 'UTC') === s.timezone) ?? false;
  const arm = (ctx: restate.ObjectContext, s: ScheduleState, now: number): void => {
    s.armedAt = s.nextAt;
    if (s.nextAt === undefined) return;
    ctx.genericSend({ service: SCHEDULES, method: 'tick', key: ctx.key, parameter: { at: s.nextAt }, inputSerde: json, delay: Math.max(0, s.nextAt - now) });
  };

  const schedules = restate.object({
    name: SCHEDULES,
    handlers: {
      /** Every replica at start: creates the schedule (starting now: earlier slots are not
       *  "missed"), refreshes its policy, arms it if nothing is armed. */
      ensure: async (ctx: restate.ObjectContext, req: EnsureRequest): Promise<void> => {
        const now = await ctx.date.now();
        const s: ScheduleState = (await ctx.get<ScheduleState>('s')) ?? {
          workflow: req.workflow, cron: req.cron, timezone: req.timezone, catchUp: req.catchUp, createdAt: now, handledUpTo: now, active: true,
        };
        s.catchUp = req.catchUp;
        s.active = true;
        if (s.armedAt === undefined) {
          s.nextAt = calendar(s.cron, s.timezone).nextAfter(Math.max(now, s.handledUpTo));
          // A downtime's slots are decided by the first tick: arm it now if any are due.
          const due = calendar(s.cron, s.timezone).nextAfter(s.handledUpTo);
          if (due !== undefined && due <= now) s.nextAt = due;
          arm(ctx, s, now);
        }
        ctx.set('s', s);
      },
      tick: async (ctx: restate.ObjectContext, req: { at: number }): Promise<void> => {
        const s = await ctx.get<ScheduleState>('s');
        if (!s || s.armedAt !== req.at) return; // a stale chain ends here
        if (!stillRegistered(s)) {
          // The workflow or this schedule was removed from the code: stop; a replica that
          // registers it again re-arms it through `ensure`.
          s.active = false;
          s.armedAt = undefined;
          ctx.set('s', s);
          return;
        }
        const now = await ctx.date.now();
        const plan = planSlots({ after: s.handledUpTo, now, policy: s.catchUp, cap: CATCH_UP_ALL_CAP, graceMs: ON_TIME_GRACE_MS, calendar: calendar(s.cron, s.timezone) });
        const ledger = (await ctx.get<LedgerRow[]>('slots')) ?? [];
        const wf = registry.find(s.workflow);
        for (const d of plan.decisions) {
          let runId: string | undefined;
          if ((d.fate === 'fired' || d.fate === 'caught-up') && wf) {
            const slot = new Date(d.at).toISOString();
            runId = slotRunId(s.workflow, slot);
            ctx.genericSend({ service: serviceName(s.workflow), method: 'run', key: runId, parameter: { input: { slot, fate: d.fate } }, inputSerde: json });
          }
          ledger.push({ at: d.at, fate: d.fate, reason: d.reason, ...(runId ? { runId } : {}), count: 1, recordedAt: now });
        }
        if (plan.range) {
          const r = plan.range;
          ledger.push({ at: r.from, fate: r.fate, reason: `${r.atLeast ? 'at least ' : ''}${r.count} more slots: ${r.reason}`, count: r.count, until: r.to, recordedAt: now });
        }
        if (ledger.length > LEDGER_KEEP) ledger.splice(0, ledger.length - LEDGER_KEEP);
        ctx.set('slots', ledger);
        s.handledUpTo = plan.handledUpTo;
        s.nextAt = plan.next;
        arm(ctx, s, now);
        ctx.set('s', s);
      },
    },
  });

  const inbox = restate.object({
    name: INBOX,
    handlers: {
      publish: async (ctx: restate.ObjectContext, req: PublishRequest): Promise<{ runIds: string[]; duplicate: boolean }> => {
        const known = await ctx.get<StoredEvent>('e');
        if (known) return { runIds: known.runIds, duplicate: true };
        const now = await ctx.date.now();
        const runIds = registry.subscribers(req.name).map((workflow) => {
          const runId = eventRunId(ctx.key, workflow);
          ctx.genericSend({ service: serviceName(workflow), method: 'run', key: runId, parameter: { input: req.payload ?? null }, inputSerde: json });
          return runId;
        });
        ctx.set('e', { id: ctx.key, name: req.name, payload: req.payload ?? null, createdAt: now, runIds } satisfies StoredEvent);
        return { runIds, duplicate: false };
      },
    },
  });

  const secrets = restate.object({
    name: SECRETS,
    handlers: {
      get: async (ctx: restate.ObjectContext): Promise<string> => {
        const known = await ctx.get<string>('secret');
        if (known) return known;
        // Minted inside a journaled run: unguessable, and the same on a replay.
        const secret = await ctx.run('mint', () => randomBytes(32).toString('base64url'));
        ctx.set('secret', secret);
        return secret;
      },
    },
  });

  return [schedules, inbox, secrets];
}

const iso = (t: number): string => new Date(t).toISOString();

/** The engine side: calls through ingress, reads through admin SQL. */
export class ClusterTriggerClient {
  constructor(
    private readonly ingress: () => string,
    private readonly admin: () => AdminApi,
  ) {}

  private async call<T>(service: string, key: string, method: string, body: unknown): Promise<T> {
    const r = await retryWhileUnknown(() => httpJson('POST', `${this.ingress()}/${service}/${encodeURIComponent(key)}/${method}`, body));
    if (r.status >= 400 && r.status < 500) throw new ValidationError(`restate ${service}/${method} refused (${r.status}): ${r.text.slice(0, 200)}`);
    if (!r.ok) throw new BackendUnavailableError(`restate ${service}/${method} failed (${r.status}): ${r.text.slice(0, 200)}`);
    return r.json as T;
  }

  /** Every registered schedule is ensured (idempotent: every replica does it at start). */
  async ensureSchedules(registry: WorkflowRegistry): Promise<void> {
    const all: { key: string; req: EnsureRequest }[] = [];
    for (const { definition } of registry.all()) {
      for (const t of definition.triggers) {
        // The key is the schedule id the SQLite store uses: `<workflow>|<trigger key>`.
        if (t.type === 'schedule') all.push({ key: `${definition.name}|${triggerKey(t)}`, req: { workflow: definition.name, cron: t.cron, timezone: t.timezone ?? 'UTC', catchUp: t.catchUp } });
      }
    }
    await Promise.all(all.map((s) => this.call(SCHEDULES, s.key, 'ensure', s.req)));
  }

  publish(eventId: string, req: PublishRequest): Promise<{ runIds: string[]; duplicate: boolean }> {
    return this.call(INBOX, eventId, 'publish', req);
  }

  webhookSecret(workflow: string): Promise<string> {
    return this.call(SECRETS, workflow, 'get', null);
  }

  /** A run an event or a schedule slot of this cluster started, found in the inbox or the
   *  slot ledger: known to every replica the moment the publish (or tick) committed, while
   *  the run's own invocation, sent from inside that handler, may not show in Restate yet.
   *  Looked up only for a run id Restate does not show (a miss is rare: one scan). */
  async issuedRun(runId: string, workflows: readonly string[], versionOf: (workflow: string) => string | undefined): Promise<OutboxEntry | undefined> {
    const like = `value_utf8 LIKE ${sqlString(`%${JSON.stringify(runId)}%`)}`;
    const entry = (workflow: string, input: Json, at: number): OutboxEntry => ({ runId, workflow, version: versionOf(workflow) ?? 'unknown', input, state: 'forwarded', createdAt: at, updatedAt: at });
    if (runId.startsWith('evt-')) {
      const rows = await this.admin().query<{ value_utf8: string }>(`SELECT value_utf8 FROM state WHERE service_name = ${sqlString(INBOX)} AND key = 'e' AND ${like}`);
      for (const r of rows) {
        const e = JSON.parse(r.value_utf8) as StoredEvent;
        const workflow = e.runIds.includes(runId) ? workflows.find((w) => eventRunId(e.id, w) === runId) : undefined;
        if (workflow) return entry(workflow, e.payload, e.createdAt);
      }
    } else if (runId.startsWith('cron-')) {
      const rows = await this.admin().query<{ service_key: string; value_utf8: string }>(`SELECT service_key, value_utf8 FROM state WHERE service_name = ${sqlString(SCHEDULES)} AND key = 'slots' AND ${like}`);
      for (const r of rows) {
        const row = (JSON.parse(r.value_utf8) as LedgerRow[]).find((l) => l.runId === runId);
        if (row) return entry(r.service_key.split('|')[0]!, { slot: iso(row.at), fate: row.fate }, row.recordedAt);
      }
    }
    return undefined;
  }

  private async stateOf<T>(service: string, key: string): Promise<{ key: string; value: T }[]> {
    const rows = await this.admin().query<{ service_key: string; value_utf8: string | null }>(
      `SELECT service_key, value_utf8 FROM state WHERE service_name = ${sqlString(service)} AND key = ${sqlString(key)}`,
    );
    return rows.filter((r) => r.value_utf8 !== null).map((r) => ({ key: r.service_key, value: JSON.parse(r.value_utf8!) as T }));
  }

  async listSchedules(): Promise<ScheduleView[]> {
    const rows = await this.stateOf<ScheduleState>(SCHEDULES, 's');
    return rows
      .map(({ value: s }) => {
        const v: ScheduleView = { workflow: s.workflow, cron: s.cron, timezone: s.timezone, catchUp: s.catchUp, active: s.active, createdAt: iso(s.createdAt), handledUpTo: iso(s.handledUpTo) };
        if (s.nextAt !== undefined && s.active) v.nextAt = iso(s.nextAt);
        return v;
      })
      .sort((a, b) => a.workflow.localeCompare(b.workflow) || a.cron.localeCompare(b.cron));
  }

  async listSlots(filter: SlotFilter): Promise<SlotView[]> {
    const [schedules, ledgers] = await Promise.all([this.stateOf<ScheduleState>(SCHEDULES, 's'), this.stateOf<LedgerRow[]>(SCHEDULES, 'slots')]);
    const workflowOf = new Map(schedules.map((s) => [s.key, s.value.workflow]));
    const out: SlotView[] = [];
    for (const { key, value } of ledgers) {
      const workflow = workflowOf.get(key) ?? key.split('|')[0]!;
      if (filter.workflow && workflow !== filter.workflow) continue;
      for (const r of value) {
        if (filter.fate && r.fate !== filter.fate) continue;
        const v: SlotView = { workflow, slot: iso(r.at), fate: r.fate, reason: r.reason, count: r.count, recordedAt: iso(r.recordedAt) };
        if (r.runId) v.runId = r.runId;
        if (r.until !== undefined) v.until = iso(r.until);
        out.push(v);
      }
    }
    return out.sort((a, b) => b.slot.localeCompare(a.slot)).slice(0, filter.limit ?? 100);
  }

  async listEvents(filter: EventFilter): Promise<EventView[]> {
    const rows = await this.stateOf<StoredEvent>(INBOX, 'e');
    return rows
      .map((r) => r.value)
      .filter((e) => (!filter.name || e.name === filter.name) && (!filter.unmatched || e.runIds.length === 0))
      .sort((a, b) => b.createdAt - a.createdAt || b.id.localeCompare(a.id))
      .slice(0, filter.limit ?? 100)
      .map((e) => ({ id: e.id, name: e.name, payload: e.payload, createdAt: iso(e.createdAt), runIds: e.runIds }));
  }
}
