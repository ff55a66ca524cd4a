// A run's step events kept in Restate (docs/live-output.md, "Where they are seen"): a virtual
// object keyed by run id, so a subscriber on any replica reads, in order and by offset, the
// events of the executions every replica served. The executing process appends what its
// sessions emit (event-log.ts), outside the run's journal (events are not replayed); readers
// long-poll `wait`, which answers at once with what is there from their offset, or else parks
// on an awakeable that the next `append` resolves with the new events (no polling).
// State: pages `p<k>` of PAGE events, and `m`: the count, the parked readers, the last
// append's time (the log expires the engine's retention after it, as the run itself does).
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import { describeIssue } from '../../domain/validate.ts';
import type { StepEvent } from '../../runtime/step-events.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const EVENT_LOG_OBJECT = 'tqevents';

/** One logged event: the event and the id of the process that executed it (a subscriber in
 *  that process already had it from its own hub). */
export interface LoggedEvent {
  o: string;
  e: StepEvent;
}

/** What a read answers: the events from the asked offset, and the offset after them. */
export interface EventPage {
  events: LoggedEvent[];
  next: number;
}

const PAGE = 64;
/** One answer holds at most this many events (a reader asks again from `next`). */
export const MAX_READ = 500;
/** Readers parked at once per run; past it the oldest is answered empty (it asks again). */
const MAX_WAITERS = 64;
/** The longest a `wait` parks (the reader's HTTP request is bounded a little above it). */
export const MAX_WAIT_MS = 30_000;

const appendBody = z.object({ events: z.array(z.object({ o: z.string().max(100), e: z.looseObject({ type: z.string() }) })).min(1).max(10_000) }).strict();
const origin = () => z.string().min(1).max(100);
const waitBody = z.object({ from: z.number().int().min(0), waitMs: z.number().int().min(0).max(MAX_WAIT_MS).optional(), skip: origin().optional() }).strict();
const watchBody = z.object({ id: z.string().min(1).max(300), from: z.number().int().min(0), until: z.number(), skip: origin().optional() }).strict();

const parsed = <T>(schema: z.ZodType<T>, body: unknown, what: string): T => {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new restate.TerminalError(describeIssue(r.error.issues, what), { errorCode: 400 });
  return r.data;
};

type Ctx = restate.ObjectContext | restate.ObjectSharedContext;

/** A parked reader: its awakeable, the offset it waits from, until when (its wait's end), and
 *  the process whose events do not wake it (its own process's: it has those already). */
interface Waiter {
  id: string;
  from: number;
  until: number;
  skip?: string;
}

/** One state entry for what every call reads (one read of lazy state): the count, the
 *  parked readers, the last append's time (for the expiry). */
interface Meta {
  n: number;
  w: Waiter[];
  at?: number;
}

const metaOf = async (ctx: Ctx): Promise<Meta> => (await ctx.get<Meta>('m')) ?? { n: 0, w: [] };

/** Events [from, min(from + MAX_READ, n)) read page by page. */
async function readFrom(ctx: Ctx, from: number, n: number): Promise<EventPage> {
  const end = Math.min(n, from + MAX_READ);
  const events: LoggedEvent[] = [];
  for (let k = Math.floor(from / PAGE); k * PAGE < end; k++) {
    const page = (await ctx.get<LoggedEvent[]>(`p${k}`)) ?? [];
    for (let i = Math.max(from, k * PAGE); i < Math.min(end, (k + 1) * PAGE); i++) events.push(page[i - k * PAGE]!);
  }
  return { events, next: from + events.length };
}

export function buildEventLogObject(retentionMs: number) {
  return restate.object({
    name: EVENT_LOG_OBJECT,
    // Only the pages a call touches are read: a long run's log is not loaded whole per append.
    options: { enableLazyState: true },
    handlers: {
      /** Appends a batch in order; answers the parked readers it has news for. */
      append: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const events = parsed(appendBody, body, 'step events').events as unknown as LoggedEvent[];
        const m = await metaOf(ctx);
        const was = m.n;
        let k = Math.floor(was / PAGE);
        let page = was % PAGE ? ((await ctx.get<LoggedEvent[]>(`p${k}`)) ?? []) : [];
        for (const e of events) {
          page.push(e);
          if (page.length === PAGE) {
            ctx.set(`p${k++}`, page);
            page = [];
          }
        }
        if (page.length) ctx.set(`p${k}`, page);
        const n = was + events.length;
        const now = await ctx.date.now();
        const still: Waiter[] = [];
        for (const w of m.w) {
          if (w.until < now) continue; // its wait ended: the reader asks anew
          const fresh = events.slice(Math.max(0, w.from - was));
          // Only its own process's events came: nothing to wake it for; it waits on from here.
          if (!fresh.some((e) => e.o !== w.skip)) {
            still.push({ ...w, from: Math.max(w.from, n) });
            continue;
          }
          ctx.resolveAwakeable<EventPage>(w.id, w.from >= was ? { events: fresh.slice(0, MAX_READ), next: Math.min(n, w.from + MAX_READ) } : await readFrom(ctx, w.from, n));
        }
        if (m.at === undefined) ctx.genericSend({ service: EVENT_LOG_OBJECT, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: retentionMs });
        ctx.set('m', { n, w: still, at: now } satisfies Meta);
      },
      /** The log's end once every append sent before this call is in (exclusive: queued
       *  behind them), where a follower from now on starts. */
      end: async (ctx: restate.ObjectContext): Promise<number> => (await metaOf(ctx)).n,
      /** From `from`: what is there, or else, with `waitMs`, the next events once appended
       *  (empty when none came in time); appends of process `skip` alone do not answer it. */
      wait: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, body: unknown): Promise<EventPage> => {
        const { from, waitMs, skip } = parsed(waitBody, body, 'event read');
        const { n } = await metaOf(ctx);
        if (from < n || !waitMs) return readFrom(ctx, from, n);
        const { id, promise } = ctx.awakeable<EventPage>();
        // Registered under the object's lock: an append before it is seen there, none is lost.
        const until = (await ctx.date.now()) + waitMs;
        ctx.genericSend({ service: EVENT_LOG_OBJECT, method: 'watch', key: ctx.key, parameter: { id, from, until, ...(skip ? { skip } : {}) }, inputSerde: restate.serde.json });
        const timedOut: EventPage = { events: [], next: from };
        return restate.RestatePromise.race([promise, ctx.sleep(waitMs).map(() => timedOut)]);
      }),
      /** Parks a reader (from `wait`), or answers it at once when its events came meanwhile. */
      watch: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const w = parsed(watchBody, body, 'event watch');
        const m = await metaOf(ctx);
        if (w.from < m.n) return ctx.resolveAwakeable<EventPage>(w.id, await readFrom(ctx, w.from, m.n));
        const waiters = [...m.w, w];
        while (waiters.length > MAX_WAITERS) {
          const old = waiters.shift()!;
          ctx.resolveAwakeable<EventPage>(old.id, { events: [], next: old.from });
        }
        ctx.set('m', { ...m, w: waiters } satisfies Meta);
      },
      /** The log goes `retentionMs` after its last append (as Restate drops the ended run). */
      expire: async (ctx: restate.ObjectContext): Promise<void> => {
        const at = (await metaOf(ctx)).at ?? 0;
        const left = at + retentionMs - (await ctx.date.now());
        if (left <= 0) return ctx.clearAll();
        ctx.genericSend({ service: EVENT_LOG_OBJECT, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: left });
      },
    },
  });
}
