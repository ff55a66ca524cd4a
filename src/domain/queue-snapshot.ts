// One queue's flow-control state as plain data (pure: no clock, no I/O), for a backend that
// keeps it in a store and rebuilds the decision-maker per call: the Restate virtual object of
// a queue (src/adapters/restate/queue-object.ts) holds a QueueSnapshot in its state. Each
// call rebuilds a QueueState (rate-limit.ts) from it, so both backends decide alike: who
// starts next, the sliding rate window, the keys' turns, priority.
import { QueueState, type QueueLimits, type QueueWait } from './rate-limit.ts';

/** A step body holding a slot, or waiting for one. `id` identifies one ask (the Restate
 *  awakeable the grant resolves): an attempt asking again asks anew. */
export interface SlotAsk {
  id: string;
  runId: string;
  step: string;
  key: string;
  /** When it joined the line (a waiter) or was granted (a holder). */
  at: number;
  priority?: number;
  /** A holder of a rate-limited queue whose body has not begun yet (markStarted): its start
   *  counts in every window until then, so a body that begins late (its run's invocation
   *  was down when the grant came) never starts beside a later window's grants. */
  pending?: true;
}

export interface QueueWaiter extends SlotAsk {
  order: number;
}

export interface QueueSnapshot {
  limits: QueueLimits;
  holders: SlotAsk[];
  waiters: QueueWaiter[];
  /** Starts within the longest rate period (what the sliding windows count); a pending
   *  holder's start is not here yet. */
  starts: { key: string; at: number }[];
  /** The keys' round-robin turns (QueueState.turns), of keys holding or waiting. */
  turns: { tick: number; served: [string, number][] };
  /** The next waiter's place. */
  order: number;
}

export function emptySnapshot(limits: QueueLimits): QueueSnapshot {
  return { limits, holders: [], waiters: [], starts: [], turns: { tick: 0, served: [] }, order: 1 };
}

const longestPeriod = (l: QueueLimits): number => Math.max(l.rate?.periodMs ?? 0, l.key?.rate?.periodMs ?? 0);

function rebuild(s: QueueSnapshot): QueueState<QueueWaiter> {
  const q = new QueueState<QueueWaiter>(s.limits);
  for (const h of s.holders) {
    q.hold(h.key);
    if (h.pending) q.recordPendingStart(h.key);
  }
  for (const st of s.starts) q.recordPastStart(st.key, st.at);
  for (const w of [...s.waiters].sort((a, b) => a.order - b.order)) q.enqueue(w);
  q.restoreTurns(s.turns);
  return q;
}

/** Adds an ask to the line (nothing when that id is already holding or waiting). */
export function joinLine(s: QueueSnapshot, ask: Omit<SlotAsk, 'at'>, now: number): boolean {
  if (s.holders.some((h) => h.id === ask.id) || s.waiters.some((w) => w.id === ask.id)) return false;
  s.waiters.push({ ...ask, at: now, order: s.order++ });
  return true;
}

/** Drops an ask, holding or waiting (a body ended, or its run left the line). A pending
 *  holder's start counts from `now` (its body may have begun unannounced). */
export function leaveLine(s: QueueSnapshot, id: string, now: number): boolean {
  const before = s.holders.length + s.waiters.length;
  for (const h of s.holders) if (h.id === id && h.pending) s.starts.push({ key: h.key, at: now });
  s.holders = s.holders.filter((h) => h.id !== id);
  s.waiters = s.waiters.filter((w) => w.id !== id);
  return s.holders.length + s.waiters.length !== before;
}

/** The body of a pending holder begins: its start counts from `now`. False: no such pending holder. */
export function markStarted(s: QueueSnapshot, id: string, now: number): boolean {
  const h = s.holders.find((x) => x.id === id && x.pending);
  if (!h) return false;
  delete h.pending;
  s.starts.push({ key: h.key, at: now });
  return true;
}

/** Grants every waiter the limits allow at `now` (moved to holders; with a rate limit, each
 *  a pending start until markStarted);
 *  `later`: when the next one will be allowed (a rate window opens), if one still waits for it. */
export function grantDue(s: QueueSnapshot, now: number): { granted: SlotAsk[]; later?: number } {
  const q = rebuild(s);
  const granted: SlotAsk[] = [];
  const period = longestPeriod(s.limits);
  const counted = period > 0;
  let later: number | undefined;
  for (;;) {
    const pick = q.take(now, true);
    if (pick.type === 'none') break;
    if (pick.type === 'later') {
      later = pick.at;
      break;
    }
    const { order: _order, ...ask } = pick.waiter;
    granted.push({ ...ask, at: now, ...(counted ? { pending: true as const } : {}) });
  }
  const taken = new Set(granted.map((g) => g.id));
  s.waiters = s.waiters.filter((w) => !taken.has(w.id));
  s.holders.push(...granted);
  // The grants' starts are pending in their holders (markStarted moves them here).
  s.starts = counted ? s.starts.filter((st) => st.at > now - period) : [];
  const busy = new Set([...s.holders, ...s.waiters].map((a) => a.key));
  const turns = q.turns();
  s.turns = { tick: turns.tick, served: turns.served.filter(([key]) => busy.has(key)) };
  return later === undefined ? { granted } : { granted, later };
}

/** Nothing held, waiting or counted: the state can go. */
export function isIdle(s: QueueSnapshot, now: number): boolean {
  const period = longestPeriod(s.limits);
  return s.holders.length === 0 && s.waiters.length === 0 && s.starts.every((st) => st.at <= now - period);
}

/** Where `runId`'s step waiting in this queue stands (`why`), as QueueManager.waitOf says it. */
export function waitIn(queue: string, s: QueueSnapshot, runId: string): QueueWait | undefined {
  const w = s.waiters.find((x) => x.runId === runId);
  if (!w) return undefined;
  const q = rebuild(s);
  const st = q.stats(w.key);
  const perKey = s.limits.key?.concurrency !== undefined;
  return {
    queue, key: w.key, step: w.step, ahead: q.ahead(w),
    running: perKey ? st.keyRunning : st.running,
    limit: perKey ? s.limits.key!.concurrency : s.limits.concurrency,
  };
}
