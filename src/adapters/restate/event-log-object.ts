// A run's step events kept in Restate (docs/live-output.md, "Where they are seen"): a virtual
// object keyed by run id, so a subscriber on any replica reads, in order and by offset, the
// events of the executions every replica served. The executing process appends what its
// sessions emit (event-log.ts), outside the run's journal (events are not replayed); readers
// long-poll `wait`, which answers at once with what is there from their offset, or else parks
// on an awakeable that the next `append` resolves with the new events (no polling).
// State: `n` (events so far), pages `p<k>` of PAGE events, `w` (parked readers), `at` (the
// last append, for the expiry after the engine's retention, as the run itself expires).
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
const waitBody = z.object({ from: z.number().int().min(0), waitMs: z.number().int().min(0).max(MAX_WAIT_MS).optional() }).strict();
const watchBody = z.object({ id: z.string().min(1).max(300), from: z.number().int().min(0) }).strict();

const parsed = <T>(schema: z.ZodType<T>, body: unknown, what: string): T => {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new restate.TerminalError(describeIssue(r.error.issues, what), { errorCode: 400 });
  return r.data;
};

type Ctx = restate.ObjectContext | restate.ObjectSharedContext;

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
      /** Appends a batch in order; answers the parked readers with what they wait for. */
      append: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const events = parsed(appendBody, body, 'step events').events as unknown as LoggedEvent[];
        const was = (await ctx.get<number>('n')) ?? 0;
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
        ctx.set('n', n);
        const waiters = (await ctx.get<{ id: string; from: number }[]>('w')) ?? [];
        const still: typeof waiters = [];
        for (const w of waiters) {
          if (w.from >= n) still.push(w);
          else ctx.resolveAwakeable<EventPage>(w.id, w.from >= was ? { events: events.slice(w.from - was, w.from - was + MAX_READ), next: Math.min(n, w.from + MAX_READ) } : await readFrom(ctx, w.from, n));
        }
        if (still.length) ctx.set('w', still);
        else if (waiters.length) ctx.clear('w');
        const first = (await ctx.get<number>('at')) === undefined;
        ctx.set('at', await ctx.date.now());
        if (first) ctx.genericSend({ service: EVENT_LOG_OBJECT, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: retentionMs });
      },
      /** The log's end once every append sent before this call is in (exclusive: queued
       *  behind them), where a follower from now on starts. */
      end: async (ctx: restate.ObjectContext): Promise<number> => (await ctx.get<number>('n')) ?? 0,
      /** From `from`: what is there, or else, with `waitMs`, the next events once appended
       *  (empty when none came in time). */
      wait: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, body: unknown): Promise<EventPage> => {
        const { from, waitMs } = parsed(waitBody, body, 'event read');
        const n = (await ctx.get<number>('n')) ?? 0;
        if (from < n || !waitMs) return readFrom(ctx, from, n);
        const { id, promise } = ctx.awakeable<EventPage>();
        // Registered under the object's lock: an append before it is seen there, none is lost.
        ctx.genericSend({ service: EVENT_LOG_OBJECT, method: 'watch', key: ctx.key, parameter: { id, from }, inputSerde: restate.serde.json });
        const timedOut: EventPage = { events: [], next: from };
        return restate.RestatePromise.race([promise, ctx.sleep(waitMs).map(() => timedOut)]);
      }),
      /** Parks a reader (from `wait`), or answers it at once when its events came meanwhile. */
      watch: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const { id, from } = parsed(watchBody, body, 'event watch');
        const n = (await ctx.get<number>('n')) ?? 0;
        if (from < n) return ctx.resolveAwakeable<EventPage>(id, await readFrom(ctx, from, n));
        const waiters = [...((await ctx.get<{ id: string; from: number }[]>('w')) ?? []), { id, from }];
        while (waiters.length > MAX_WAITERS) {
          const old = waiters.shift()!;
          ctx.resolveAwakeable<EventPage>(old.id, { events: [], next: old.from });
        }
        ctx.set('w', waiters);
      },
      /** The log goes `retentionMs` after its last append (as Restate drops the ended run). */
      expire: async (ctx: restate.ObjectContext): Promise<void> => {
        const at = (await ctx.get<number>('at')) ?? 0;
        const left = at + retentionMs - (await ctx.date.now());
        if (left <= 0) return ctx.clearAll();
        ctx.genericSend({ service: EVENT_LOG_OBJECT, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: left });
      },
    },
  });
}
