// Step-level flow control on Restate (docs/flow-control.md, Backends): one virtual object per
// queue, `tqqueue` keyed by the queue's name, holding its slots and its line in its state (a
// QueueSnapshot, src/domain/queue-snapshot.ts). Restate runs one exclusive handler per key at
// a time, on whichever node owns the key's partition, so the limits hold across every engine
// replica serving the same Restate, and the state moves with the partition when a node dies.
//
// - `acquire` (one-way, from a run's step, queue-slot.ts): joins the line with the awakeable
//   the step waits on, then grants what the limits allow. A grant is in the object's state
//   before its awakeable is resolved, so a slot is never given twice.
// - `release` (a body ended: one-way; a run leaving the line: a call) drops the ask, holding
//   or waiting, and grants the next. Idempotent (by the awakeable's id).
// - `started` (one-way, from a run given a slot of a rate-limited queue, as its body begins):
//   its start, pending in every window since the grant, counts from now. A grant resolved
//   while the run's invocation could not run (its replica died; Restate retries it after a
//   backoff while another replica serves this object) starts no body until it runs
//   again: counted at the grant, that late body would start beside the next window's.
// - `pump`: a delayed send to itself for when a rate window opens.
// - `audit`: a delayed send to itself while asks are in the object: drops those whose run
//   Restate reports ended (an invocation killed from outside never releases; see lease below).
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import { describeIssue } from '../../domain/validate.ts';
import { emptySnapshot, grantDue, isIdle, joinLine, leaveLine, markStarted, type QueueSnapshot, type SlotAsk } from '../../domain/queue-snapshot.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const QUEUE_OBJECT = 'tqqueue';

/** What a grant resolves the step's awakeable with: when the slot was granted. `refused`: a
 *  `noWait` ask the limits did not allow at once (it left the line): the runs holding or
 *  waiting for its key. */
export interface Grant {
  t: number;
  refused?: string[];
}

const rate = z.object({ limit: z.number().int().positive(), periodMs: z.number().positive() }).strict();
const level = z.object({ concurrency: z.number().int().positive().optional(), rate: rate.optional() }).strict();
const limitsSchema = level.extend({ key: level.optional() }).strict();

const acquireSchema = z.object({
  id: z.string().min(1).max(300),
  runId: z.string().min(1).max(300),
  step: z.string().max(500),
  key: z.string().max(500),
  priority: z.number().int().optional(),
  noWait: z.literal(true).optional(),
  limits: limitsSchema,
}).strict();

export type AcquireRequest = z.infer<typeof acquireSchema>;

/** What `acquire` answers a run that calls it (a send ignores it): whether the ask was
 *  granted at once, and else the runs of its key holding or waiting before it. */
export interface AcquireAnswer {
  granted: boolean;
  others: string[];
}

const releaseSchema = z.object({ id: z.string().min(1).max(300) }).strict();

const json = restate.serde.json;
const STATE = 'q';
/** How often an object with asks in it checks that their runs still live. */
export const AUDIT_MS = 60_000;

/** The lease check: of these run ids, those whose run invocation Restate reports ended
 *  (admin SQL, run-handler independent). Absent: no audit. */
export type EndedRuns = (runIds: string[]) => Promise<string[]>;

export function buildQueueObject(ended?: EndedRuns) {
  return restate.object({
    name: QUEUE_OBJECT,
    handlers: {
      acquire: async (ctx: restate.ObjectContext, body: unknown): Promise<AcquireAnswer> => {
        const req = acquireSchema.safeParse(body);
        if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'queue acquire'), { errorCode: 400 });
        const { limits, noWait, ...ask } = req.data;
        const s = (await ctx.get<QueueSnapshot>(STATE)) ?? emptySnapshot(limits);
        // The limits the code asking now has: a change in code takes effect with its next ask.
        s.limits = limits;
        const now = await ctx.date.now();
        const joined = joinLine(s, ask.priority ? ask : { id: ask.id, runId: ask.runId, step: ask.step, key: ask.key }, now);
        const due = grantDue(s, now);
        const granted = !joined || due.granted.some((g) => g.id === ask.id);
        // The runs of its key holding or waiting besides it (a singleton's `cancel` cancels them).
        const others = granted ? [] : [...new Set([...s.holders, ...s.waiters].filter((a) => a.key === ask.key && a.id !== ask.id).map((a) => a.runId))];
        // A slot now or never (run-flow.ts): not granted in this turn, it leaves the line.
        if (noWait && !granted) leaveLine(s, ask.id, now);
        await settle(ctx, s, now, due.granted);
        if (noWait && !granted) ctx.resolveAwakeable<Grant>(ask.id, { t: now, refused: others });
        return { granted, others };
      },

      release: async (ctx: restate.ObjectContext, body: unknown): Promise<{ released: boolean }> => {
        const req = releaseSchema.safeParse(body);
        if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'queue release'), { errorCode: 400 });
        const s = await ctx.get<QueueSnapshot>(STATE);
        if (!s) return { released: false };
        const now = await ctx.date.now();
        const released = leaveLine(s, req.data.id, now);
        await settle(ctx, s, now);
        return { released };
      },

      started: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const req = releaseSchema.safeParse(body);
        if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'queue started'), { errorCode: 400 });
        const s = await ctx.get<QueueSnapshot>(STATE);
        if (!s) return;
        const now = await ctx.date.now();
        // Not pending (released first, or a grant of a queue without a rate limit): nothing to do.
        if (markStarted(s, req.data.id, now)) await settle(ctx, s, now);
      },

      pump: async (ctx: restate.ObjectContext, at: unknown): Promise<void> => {
        // A stale timer (an earlier one replaced it) ends here.
        if ((await ctx.get<number>('pumpAt')) !== at) return;
        ctx.clear('pumpAt');
        const s = await ctx.get<QueueSnapshot>(STATE);
        if (s) await settle(ctx, s, await ctx.date.now());
      },

      audit: async (ctx: restate.ObjectContext): Promise<void> => {
        ctx.clear('auditAt');
        const s = await ctx.get<QueueSnapshot>(STATE);
        if (!s) return;
        if (ended) {
          const runs = [...new Set([...s.holders, ...s.waiters].map((a) => a.runId))];
          // Best effort: an admin API that does not answer drops nothing (tried again later).
          const gone = await ctx.run('ended', () => ended(runs).catch(() => [] as string[]));
          const dead = new Set(gone);
          const now = await ctx.date.now();
          for (const a of [...s.holders, ...s.waiters]) if (dead.has(a.runId)) leaveLine(s, a.id, now);
        }
        await settle(ctx, s, await ctx.date.now());
      },
    },
    options: {
      retryPolicy: { initialInterval: 100, exponentiationFactor: 2, maxInterval: 2000, maxAttempts: 100_000, onMaxAttempts: 'pause' },
    },
  });
}

/** Grants what is due, resolves those asks' awakeables, arms the timers, stores the state. */
async function settle(ctx: restate.ObjectContext, s: QueueSnapshot, now: number, grantedBefore: readonly SlotAsk[] = []): Promise<void> {
  const due = grantDue(s, now);
  const granted = [...grantedBefore, ...due.granted];
  const later = due.later;
  if (isIdle(s, now)) {
    ctx.clear(STATE);
  } else {
    ctx.set(STATE, s);
    const auditAt = await ctx.get<number>('auditAt');
    // (An audit armed long ago that never cleared its mark counts as none.)
    if (s.holders.length + s.waiters.length > 0 && (auditAt === null || auditAt < now - AUDIT_MS)) {
      ctx.set('auditAt', now + AUDIT_MS);
      ctx.genericSend({ service: QUEUE_OBJECT, method: 'audit', key: ctx.key, parameter: null, inputSerde: json, delay: AUDIT_MS });
    }
  }
  // After the state: a grant is recorded before its holder hears of it.
  for (const g of granted) ctx.resolveAwakeable<Grant>(g.id, { t: now });
  if (later !== undefined) {
    const armed = await ctx.get<number>('pumpAt');
    // An armed time already past is a timer that has fired (or is about to): arm anew.
    if (armed === null || armed > later || armed < now) {
      ctx.set('pumpAt', later);
      ctx.genericSend({ service: QUEUE_OBJECT, method: 'pump', key: ctx.key, parameter: later, inputSerde: json, delay: Math.max(1, later - now) });
    }
  }
}
