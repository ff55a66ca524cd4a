// Concurrent branches for the simulation's generated workflows, and their oracle.
//
// A group is one `await` of Promise.all / race / any / allSettled over 2-6 branches; a branch
// is one step (step.do with random duration, failures and retries; step.sleep; a
// step.waitForEvent, with or without timeout) or a small sequential chain of 2-3 of them (an
// async function), sometimes behind extra `.then` hops so branches settle at different
// microtask depths. The group pushes `{ g: <group id>, r: <what the combinator gave> }` to
// the run's output.
//
// The oracle (expectGroup) derives that `r` from the final journal alone: each branch settles
// when its last reached step completes (JournalEntry.order), so the combinator's answer is a
// pure function of the recorded results and completion order. A stored output that differs
// means the workflow code saw another completion order than the journal recorded (a replay
// would then pick another race winner).
import type { JournalEntry } from '../../../src/domain/journal.ts';
import type { Json } from '../../../src/domain/json.ts';
import type { Rng } from './prng.ts';

export type Backoff = 'constant' | 'linear' | 'exponential';
export type Comb = 'all' | 'race' | 'any' | 'allSettled';

export interface DoSpec {
  k: 'do';
  id: string;
  name: string;
  fails: number;
  limit: number;
  backoff: Backoff;
  delay: number;
  terminal: boolean;
  /** Event-loop turns the body takes: its "duration". */
  turns: number;
}
export type Leaf =
  | DoSpec
  /** Group sleeps are named 'doze' (not 'nap'): what follows a losing sleep may run before it is due. */
  | { k: 'sleep'; id: string; name: 'doze'; ms: number }
  | { k: 'wait'; id: string; name: string; timeout?: number };

export interface Branch {
  leaves: Leaf[];
  /** Extra identity `.then` hops on the branch promise. */
  hops: number;
}

export interface Group {
  k: 'group';
  id: string;
  comb: Comb;
  branches: Branch[];
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** A step.do; the choices are drawn in the order the sequential generator always drew them
 *  (seeds without groups keep their programs). */
export function genDo(rng: Rng, id: string, delays: readonly number[]): DoSpec {
  const name = rng.pick(['fetch', 'charge', 'mail']);
  const limit = rng.int(1, 4);
  return {
    k: 'do', id, name, limit, fails: rng.chance(0.5) ? 0 : rng.int(1, limit + 1),
    backoff: rng.pick(['constant', 'linear', 'exponential'] as const), delay: rng.pick(delays),
    terminal: rng.chance(0.15), turns: rng.int(0, 3),
  };
}

export function genGroup(rng: Rng, nextId: () => string): Group {
  const id = nextId();
  const comb = rng.pick(['all', 'all', 'race', 'race', 'any', 'allSettled'] as const);
  const leaf = (inChain: boolean): Leaf => {
    const r = rng();
    if (r < (inChain ? 0.7 : 0.55)) {
      // Mostly quick retries, so a fan-out's failing members retry within the run.
      const d = genDo(rng, nextId(), [0, 0, 10, 1000, 30_000, HOUR]);
      d.turns = rng.int(0, 6);
      return d;
    }
    if (r < (inChain ? 0.85 : 0.78)) return { k: 'sleep', id: nextId(), name: 'doze', ms: rng.pick([0, 1, 500, MIN, HOUR, DAY]) };
    return { k: 'wait', id: nextId(), name: rng.pick(['reply', 'approve']), timeout: rng.chance(0.5) ? undefined : rng.pick([0, 1000, HOUR, DAY]) };
  };
  const hops = () => rng.pick([0, 0, 0, 1, 2]);
  if (comb === 'all' && rng.chance(0.4)) {
    // A plain fan-out: several step.do with random durations, some failing and retried.
    const branches = Array.from({ length: rng.int(3, 6) }, () => {
      const d = genDo(rng, nextId(), [0, 0, 10, 1000]);
      d.turns = rng.int(0, 6);
      d.terminal = false;
      return { leaves: [d], hops: hops() };
    });
    return { k: 'group', id, comb, branches };
  }
  const branches = Array.from({ length: rng.int(2, 4) }, (): Branch => {
    const chain = rng.chance(0.3);
    return { leaves: chain ? Array.from({ length: rng.int(2, 3) }, () => leaf(true)) : [leaf(false)], hops: hops() };
  });
  return { k: 'group', id, comb, branches };
}

/** The text the workflow code makes of an error it caught. */
export const tagError = (name: string, message: string): string => `caught:${name}:${message}`;

/** The value workflow code got from a finished leaf entry, or the error tag it threw. */
function leafOutcome(leaf: Leaf, e: JournalEntry): { ok: true; v: Json } | { ok: false; v: string } {
  if (e.status === 'succeeded') return { ok: true, v: leaf.k === 'sleep' ? 'slept' : (e.result ?? null) };
  return { ok: false, v: tagError(e.error?.name ?? 'Error', e.error?.message ?? `step '${e.name}' failed`) };
}

const FINAL = new Set(['succeeded', 'failed', 'timedout']);

type Settled = { order: number; ok: boolean; v: Json };

/** How each branch settled according to the journal (undefined: not settled). */
function branchOutcomes(group: Group, entryOf: (leafId: string) => JournalEntry | undefined, problems: string[]): (Settled | undefined)[] {
  return group.branches.map((b) => {
    const values: Json[] = [];
    for (const leaf of b.leaves) {
      const e = entryOf(leaf.id);
      if (!e || !FINAL.has(e.status)) return undefined;
      if (e.order === undefined) {
        problems.push(`step ${e.name} is ${e.status} without a completion order`);
        return undefined;
      }
      const o = leafOutcome(leaf, e);
      if (!o.ok) return { order: e.order, ok: false, v: o.v };
      values.push(o.v);
      if (values.length === b.leaves.length) return { order: e.order, ok: true, v: b.leaves.length === 1 ? values[0]! : values };
    }
    return undefined;
  });
}

/** What the combinator gave, derived from the journal; `undefined` with a problem when the
 *  journal cannot explain a finished group (a branch it needed never settled). */
export function expectGroup(group: Group, entryOf: (leafId: string) => JournalEntry | undefined): { r?: Json; problems: string[] } {
  const problems: string[] = [];
  const settled = branchOutcomes(group, entryOf, problems);
  const first = (pred: (s: Settled) => boolean): Settled | undefined =>
    settled.reduce<Settled | undefined>((best, s) => (s && pred(s) && (!best || s.order < best.order) ? s : best), undefined);
  const need = (what: string) => (problems.push(`${group.comb} ${group.id}: ${what}`), { problems });
  switch (group.comb) {
    case 'all': {
      const rejected = first((s) => !s.ok);
      if (rejected) return { r: rejected.v, problems };
      if (settled.some((s) => !s)) return need('a branch never settled, yet the run went past Promise.all');
      return { r: settled.map((s) => s!.v), problems };
    }
    case 'race': {
      const winner = first(() => true);
      return winner ? { r: winner.v, problems } : need('no branch settled, yet the run went past Promise.race');
    }
    case 'any': {
      const winner = first((s) => s.ok);
      if (winner) return { r: winner.v, problems };
      if (settled.some((s) => !s)) return need('no branch fulfilled and one never settled, yet the run went past Promise.any');
      return { r: tagError('AggregateError', 'All promises were rejected'), problems };
    }
    case 'allSettled':
      if (settled.some((s) => !s)) return need('a branch never settled, yet the run went past Promise.allSettled');
      return { r: settled.map((s): Json => (s!.ok ? { ok: s!.v } : { err: s!.v })), problems };
  }
}
