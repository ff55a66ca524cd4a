// Run-level debounce on Restate (docs/flow-control.md, Debounce): one virtual object per
// workflow and key, `tqdebounce` keyed `<workflow>|<key>`, holding the pending burst (its run
// id, its last input, already sealed by the codec, its first and due times) in its state.
// Restate runs one handler per key at a time, on whichever node owns its partition, so the
// burst is one across every engine replica, and its state and timer survive any restart.
//
// - `push` (a trigger, through ingress): opens the burst or joins it (replaces its input,
//   moves its due time), and arms the one timer if none is armed at or before the due time.
// - `fire` (a delayed send to itself): a timer whose `at` is not the armed one is stale and
//   ends; one early for a burst that moved re-arms at the new due time; one on time sends the
//   workflow's `run` with the burst's last input and run id, and clears the burst in the same
//   handler (a trigger after it opens a new burst). The fired run id is kept (`fired`, 10 minutes) so a
//   result() of it waits while Restate has not shown the run yet.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import { debounceDueAt } from '../../../sdk/debounce.ts';
import { BackendUnavailableError, ValidationError } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import { deadlineFor } from '../../domain/run-control.ts';
import { describeIssue } from '../../domain/validate.ts';
import type { BurstTrigger, DebounceRequest, DebounceResult, Debouncer, PendingBurst } from '../../ports/debounce.ts';
import type { TriggerStore, TriggerWrites } from '../../ports/trigger-store.ts';
import type { WorkflowRegistry } from '../../runtime/registry.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import { retryWhileUnknown } from './deployments.ts';
import { httpJson } from './http-json.ts';
import { serviceName, type RunRequest } from './workflow-service.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const DEBOUNCE_OBJECT = 'tqdebounce';
/** A burst of a workflow this replica does not have is looked at again this much later. */
const UNKNOWN_RETRY_MS = 60_000;
/** How long a fired run id is kept (result() waits while Restate does not show the run yet). */
const FIRED_KEEP_MS = 600_000;

const json = restate.serde.json;

const pushSchema = z.object({
  workflow: z.string().min(1).max(120),
  runId: z.string().min(1).max(300),
  input: z.custom<Json>(() => true),
  periodMs: z.number().positive(),
  maxWaitMs: z.number().positive().optional(),
  traceparent: z.string().max(256).optional(),
}).strict();

interface Burst {
  workflow: string;
  runId: string;
  input: Json;
  firstAt: number;
  dueAt: number;
  traceparent?: string;
  /** Triggers collected (absent in a burst an older engine opened: counted from 1). */
  count?: number;
  /** The `at` of the one pending fire; absent: none armed. */
  armedAt?: number;
}

export function buildDebounceObject(registry: WorkflowRegistry) {
  const arm = (ctx: restate.ObjectContext, s: Burst, at: number, now: number): void => {
    s.armedAt = at;
    ctx.genericSend({ service: DEBOUNCE_OBJECT, method: 'fire', key: ctx.key, parameter: { at }, inputSerde: json, delay: Math.max(1, at - now) });
  };
  return restate.object({
    name: DEBOUNCE_OBJECT,
    handlers: {
      push: async (ctx: restate.ObjectContext, body: unknown): Promise<DebounceResult> => {
        const req = pushSchema.safeParse(body);
        if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'debounce push'), { errorCode: 400 });
        const r = req.data;
        const now = await ctx.date.now();
        const known = await ctx.get<Burst>('d');
        const s: Burst = known ?? { workflow: r.workflow, runId: r.runId, input: null, firstAt: now, dueAt: now, ...(r.traceparent ? { traceparent: r.traceparent } : {}) };
        s.input = r.input ?? null;
        s.count = known ? (s.count ?? 1) + 1 : 1;
        s.dueAt = debounceDueAt(r, s.firstAt, now);
        // One timer per burst: an armed one at or before the due time re-arms when it fires.
        if (s.armedAt === undefined || s.armedAt > s.dueAt) arm(ctx, s, s.dueAt, now);
        ctx.set('d', s);
        return { runId: s.runId, created: !known, dueAt: s.dueAt };
      },

      fire: async (ctx: restate.ObjectContext, req: { at: number }): Promise<void> => {
        const s = await ctx.get<Burst>('d');
        if (!s || s.armedAt !== req?.at) return; // stale: a later timer replaced it
        const now = await ctx.date.now();
        if (s.dueAt > now) {
          arm(ctx, s, s.dueAt, now);
          ctx.set('d', s);
          return;
        }
        const wf = registry.find(s.workflow);
        if (!wf) {
          arm(ctx, s, now + UNKNOWN_RETRY_MS, now);
          ctx.set('d', s);
          return;
        }
        const deadline = deadlineFor(now, wf.definition.timeoutMs);
        const run: RunRequest = { input: s.input, control: 1, driver: 1, ...(s.traceparent ? { traceparent: s.traceparent } : {}), ...(deadline !== undefined ? { deadline } : {}) };
        ctx.genericSend({ service: serviceName(s.workflow), method: 'run', key: s.runId, parameter: run, inputSerde: json });
        ctx.clear('d');
        ctx.set('fired', s.runId);
        ctx.genericSend({ service: DEBOUNCE_OBJECT, method: 'forget', key: ctx.key, parameter: { runId: s.runId }, inputSerde: json, delay: FIRED_KEEP_MS });
      },

      /** The fired run is long visible in Restate by now: an idle key keeps no state. */
      forget: async (ctx: restate.ObjectContext, req: { runId: string }): Promise<void> => {
        if ((await ctx.get<string>('fired')) === req?.runId) ctx.clear('fired');
      },
    },
  });
}

/** The engine side: pushes through ingress, looks bursts up through admin SQL. */
export class RestateDebouncer implements Debouncer {
  /** Flushes run one after another, so a burst's triggers are pushed in their order. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly ingress: () => string,
    private readonly admin: () => AdminApi,
    /** The input as the run gets it over the wire (sealed by the payload codec). */
    private readonly seal: (input: Json) => Json,
    /** The engine's trigger store: the dedup records and outbox of debounced triggers. */
    private readonly triggerStore: () => TriggerStore,
    private readonly now: () => number,
  ) {}

  async debounce(req: DebounceRequest): Promise<DebounceResult> {
    if (req.dedupId === undefined) return this.push(req);
    const t: BurstTrigger = { ...req, dedupId: req.dedupId };
    const seen = await this.triggerStore().write((w) => {
      const s = w.burstTrigger(t.dedupId);
      if (!s) w.recordBurstTrigger(t, undefined, this.now());
      return s;
    });
    if (seen?.joinedRun !== undefined) {
      const [b] = await this.pending({ runId: seen.joinedRun });
      return { runId: seen.joinedRun, created: false, dueAt: b?.dueAt ?? this.now(), duplicate: true };
    }
    const r = await this.push(t);
    await this.triggerStore().write((w) => w.markBurstJoined(t.dedupId, r.runId));
    // Recorded but not joined (a crash in between): the push above was its repeat.
    return seen ? { ...r, created: false, duplicate: true } : r;
  }

  joinInWrite(w: TriggerWrites, t: BurstTrigger, now: number): void {
    // Restate is not in the trigger store's write: the trigger is recorded there and pushed
    // by flush() after the commit (and at start, for one a crash left unpushed).
    if (!w.burstTrigger(t.dedupId)) w.recordBurstTrigger(t, undefined, now);
  }

  flush(): Promise<void> {
    const next = this.flushing.then(() => this.flushOnce());
    this.flushing = next.catch(() => {});
    return next;
  }

  private async flushOnce(): Promise<void> {
    for (;;) {
      const rows = await this.triggerStore().unjoinedBurstTriggers(200);
      for (const t of rows) {
        const r = await this.push(t);
        await this.triggerStore().write((w) => w.markBurstJoined(t.dedupId, r.runId));
      }
      if (rows.length < 200) return;
    }
  }

  async pending(filter: { workflow?: string; runId?: string } = {}): Promise<PendingBurst[]> {
    return pendingBursts(this.admin(), filter);
  }

  private async push(req: DebounceRequest): Promise<DebounceResult> {
    const key = `${req.workflow}|${req.key}`;
    const body = { ...req, input: this.seal(req.input) } as Partial<DebounceRequest>;
    delete body.key;
    delete body.dedupId;
    // A trigger that may come again is pushed under its dedup id: Restate answers a push
    // repeated after a crash (the row not marked joined) with the first one's result.
    const headers = req.dedupId !== undefined ? { 'idempotency-key': req.dedupId } : undefined;
    const r = await retryWhileUnknown(() => httpJson('POST', `${this.ingress()}/${DEBOUNCE_OBJECT}/${encodeURIComponent(key)}/push`, body, { headers }));
    if (r.status >= 400 && r.status < 500) throw new ValidationError(`restate ${DEBOUNCE_OBJECT}/push refused (${r.status}): ${r.text.slice(0, 200)}`);
    if (!r.ok) throw new BackendUnavailableError(`restate ${DEBOUNCE_OBJECT}/push failed (${r.status}): ${r.text.slice(0, 200)}`);
    return r.json as DebounceResult;
  }

  async debouncing(runId: string): Promise<boolean> {
    const rows = await this.admin().query<{ n: number }>(
      `SELECT count(*) AS n FROM state WHERE service_name = ${sqlString(DEBOUNCE_OBJECT)} AND value_utf8 LIKE ${sqlString(`%${JSON.stringify(runId)}%`)}`,
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }
}

/** The bursts collecting now, from the objects' state over admin SQL (the engine's
 *  debouncer and the CLI), soonest due first. */
export async function pendingBursts(admin: AdminApi, filter: { workflow?: string; runId?: string } = {}): Promise<PendingBurst[]> {
  const where = filter.runId !== undefined ? ` AND value_utf8 LIKE ${sqlString(`%${JSON.stringify(filter.runId)}%`)}` : '';
  const rows = await admin.query<{ service_key: string; value_utf8: string }>(`SELECT service_key, value_utf8 FROM state WHERE service_name = ${sqlString(DEBOUNCE_OBJECT)} AND key = 'd'${where}`);
  const out: PendingBurst[] = [];
  for (const row of rows) {
    let b: Burst;
    try {
      b = JSON.parse(row.value_utf8) as Burst;
    } catch {
      continue;
    }
    if (filter.workflow !== undefined && b.workflow !== filter.workflow) continue;
    if (filter.runId !== undefined && b.runId !== filter.runId) continue;
    out.push({ workflow: b.workflow, key: row.service_key.slice(b.workflow.length + 1), runId: b.runId, count: b.count ?? 1, firstAt: b.firstAt, dueAt: b.dueAt });
  }
  return out.sort((a, b) => a.dueAt - b.dueAt);
}
