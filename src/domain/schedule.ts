// Schedule slot decisions (pure): given the last slot a schedule already handled, the
// current time and the catch-up policy, which slots fire now and what happened to the rest.
//
// A slot is "on time" when it is the newest due slot and at most `graceMs` old: it fires
// (fate 'fired') under every policy. Every other due slot was passed while the engine was
// not looking (down, asleep, clock jumped forward) and the policy decides:
//   none   -> all 'missed'
//   latest -> the newest one 'caught-up' unless an on-time slot already covers it; the rest 'missed'
//   all    -> the newest `cap` slots fire ('caught-up'), older ones 'skipped' (over the cap)
// Slots at or before `after` are never considered, so a clock that jumps backward cannot
// make a slot fire twice. Calendar arithmetic is injected (cron), keeping this pure.

/** What a schedule does with slots that passed while the engine was not running:
 *  `'latest'` (default) runs the newest one, `'all'` runs up to the 100 newest, oldest first,
 *  `'none'` runs none (docs/triggers.md, Slot fates). */
export type CatchUpPolicy = 'latest' | 'all' | 'none';
/** What became of a schedule slot: `fired` on time, `caught-up` late, `missed` (dropped by
 *  the catch-up policy), `skipped` (over the catch-up cap of 100). */
export type SlotFate = 'fired' | 'caught-up' | 'missed' | 'skipped';

export interface SlotCalendar {
  /** First slot strictly after t, if any. */
  nextAfter(t: number): number | undefined;
  /** Newest slot at or before t, if any. */
  latestAtOrBefore(t: number): number | undefined;
}

export interface SlotPlanInput {
  /** Newest slot already handled (or the schedule's registration time). */
  after: number;
  now: number;
  policy: CatchUpPolicy;
  /** 'all' fires at most this many slots at once. */
  cap: number;
  graceMs: number;
  calendar: SlotCalendar;
  /** Dropped slots listed one by one; beyond this they are summarised in one range. */
  listLimit?: number;
}

export interface SlotDecision {
  at: number;
  fate: SlotFate;
  reason: string;
}

/** Dropped slots beyond listLimit, summarised. `count` stops at `countLimit` (then `atLeast`). */
export interface SlotRange {
  from: number;
  to: number;
  count: number;
  atLeast: boolean;
  fate: 'missed' | 'skipped';
  reason: string;
}

export interface SlotPlan {
  /** Oldest first; includes fired, caught-up and the listed dropped slots. */
  decisions: SlotDecision[];
  range?: SlotRange;
  /** The newest slot now handled (the schedule's new `after`). */
  handledUpTo: number;
  /** Next slot strictly after max(now, handledUpTo). */
  next: number | undefined;
}

/** Due slots walked forward one by one; beyond this the newest are found walking back. */
const WALK_LIMIT = 10_000;

export function planSlots(p: SlotPlanInput): SlotPlan {
  const listLimit = p.listLimit ?? 50;
  const next = p.calendar.nextAfter(Math.max(p.now, p.after));
  const keep = p.policy === 'all' ? Math.max(1, p.cap) : 1;
  // Forward from `after` is authoritative (a backward walk can disagree around DST gaps).
  const due: number[] = [];
  let overflow = false;
  for (let t = p.calendar.nextAfter(p.after); t !== undefined && t <= p.now; t = p.calendar.nextAfter(t)) {
    if (due.length >= WALK_LIMIT) {
      overflow = true;
      break;
    }
    due.push(t);
  }
  if (due.length === 0) return { decisions: [], handledUpTo: p.after, next };
  let recent = due.slice(-keep);
  if (overflow) {
    // Too many to walk: the newest `keep` slots come from walking back from now.
    const back: number[] = [];
    for (let t = p.calendar.latestAtOrBefore(p.now); t !== undefined && t > due[due.length - 1]! && back.length < keep; t = p.calendar.latestAtOrBefore(t - 1)) {
      back.push(t);
    }
    if (back.length > 0) recent = back.reverse();
  }
  const newest = recent[recent.length - 1]!;
  const onTime = p.now - newest <= p.graceMs;

  const fire: SlotDecision[] = [];
  if (p.policy === 'all') {
    for (const at of onTime ? recent.slice(0, -1) : recent) {
      fire.push({ at, fate: 'caught-up', reason: `missed while the engine was not running; catchUp 'all' runs it late` });
    }
  } else if (p.policy === 'latest' && !onTime) {
    fire.push({ at: newest, fate: 'caught-up', reason: `missed while the engine was not running; catchUp 'latest' runs the most recent missed slot` });
  }
  if (onTime) fire.push({ at: newest, fate: 'fired', reason: 'fired on time' });

  // Every due slot before `boundary` was not fired: list the oldest, summarise the rest.
  const boundary = p.policy === 'none' && !onTime ? newest + 1 : recent[0]!;
  const fate: 'missed' | 'skipped' = p.policy === 'all' ? 'skipped' : 'missed';
  const reason =
    p.policy === 'all'
      ? `over the catch-up cap of ${p.cap} slots (catchUp 'all' runs only the newest ${p.cap})`
      : p.policy === 'none'
        ? `passed while the engine was not running; catchUp 'none' drops missed slots`
        : `passed while the engine was not running; catchUp 'latest' ran only a newer slot`;
  const droppedSlots = due.filter((t) => t < boundary);
  const decisions = droppedSlots.slice(0, listLimit).map((at) => ({ at, fate, reason }));
  let range: SlotRange | undefined;
  const rest = droppedSlots.slice(listLimit);
  if (rest.length > 0 || (overflow && droppedSlots.length > 0)) {
    const from = rest[0] ?? droppedSlots[droppedSlots.length - 1]!;
    let to = rest[rest.length - 1] ?? from;
    if (overflow) {
      const last = p.calendar.latestAtOrBefore(boundary - 1);
      if (last !== undefined && last > to) to = last;
    }
    range = { from, to, count: rest.length, atLeast: overflow, fate, reason };
  }
  return { decisions: [...decisions, ...fire], range, handledUpTo: newest, next };
}

/** Plain-English lines for a schedule's recent slot ledger (newest last). */
export function describeSlots(
  workflow: string,
  cron: string,
  timezone: string,
  slots: { at: number; fate: SlotFate; reason: string; runId?: string; count?: number; until?: number }[],
  next: number | undefined,
): string[] {
  const iso = (t: number) => new Date(t).toISOString();
  const lines = slots.map((s) => {
    const span = s.count && s.count > 1 && s.until !== undefined ? `${s.count} slots ${iso(s.at)} .. ${iso(s.until)}` : `slot ${iso(s.at)}`;
    const run = s.runId ? ` -> run ${s.runId}` : '';
    return `${span}: ${s.fate}${run} (${s.reason})`;
  });
  lines.unshift(`schedule '${cron}' (${timezone}) of workflow '${workflow}'; next slot ${next === undefined ? 'none' : iso(next)}`);
  return lines;
}

export interface ScheduleFacts {
  cron: string;
  timezone: string;
  nextAt?: string;
}

export interface SlotFacts {
  slot: string;
  fate: SlotFate;
  reason: string;
  runId?: string;
  count: number;
  until?: string;
}

/** "Why didn't my 9am job run?": a workflow's schedules and recent slots (oldest first). */
export function explainSchedules(workflow: string, schedules: ScheduleFacts[], slots: SlotFacts[]): { workflow: string; summary: string; details: string[] } {
  if (schedules.length === 0) return { workflow, summary: `Workflow '${workflow}' has no schedule() trigger.`, details: [] };
  const details = schedules.flatMap((s) =>
    describeSlots(
      workflow, s.cron, s.timezone,
      slots.map((x) => ({ at: Date.parse(x.slot), fate: x.fate, reason: x.reason, runId: x.runId, count: x.count, until: x.until ? Date.parse(x.until) : undefined })),
      s.nextAt ? Date.parse(s.nextAt) : undefined,
    ),
  );
  const last = slots[slots.length - 1];
  const summary = last
    ? `Workflow '${workflow}': last slot ${last.slot} was ${last.fate}${last.runId ? ` (run ${last.runId})` : ''}: ${last.reason}.`
    : `Workflow '${workflow}': no slot has come due yet${schedules[0]?.nextAt ? `; next at ${schedules[0].nextAt}` : ''}.`;
  return { workflow, summary, details };
}
