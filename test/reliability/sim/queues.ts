// Queues in the simulation's generated workflows (issue 39), and their invariants.
//
// A seed's queue choices come from a stream of their own (seed ^ QUEUE_STREAM), drawn after
// the programs are generated: with queues off, and for every choice made without them, the
// seed builds the workflows it always built. Generated:
//   - 1-2 step queues ('qa', 'qb'): concurrency 1-3, sometimes a per-key concurrency, sometimes
//     a sliding rate limit of 1-3 starts per 200 ms - 1 min of sim clock; about half of the
//     step.do ops (sequential and in groups) take one, with a key ('k1'..'k3') or none;
//   - sometimes a run-level queue ('qr', never one a step uses: a run holds its slot while it
//     sleeps, so a step sharing it would wait on time) on simA and/or simB, with a key from
//     the input and sometimes a priority.
// The step bodies log when they start and end (on which engine), the workflow code logs each
// run's first execution; checkQueues (at each body start, each first execution, and at the
// end) asserts:
//   q-concurrency  never more than `concurrency` bodies of a queue running at once, nor more
//                  than the key's concurrency of one key. A body counts as running from its
//                  start to its end, or to its engine's death (crash or stop), whichever is
//                  first: the next owner frees a dead owner's slots (docs/flow-control.md);
//   q-rate         never more than `limit` body starts of a queue (of a key) in any window of
//                  `period` of sim clock (not checked once the clock went back);
//   q-runs         never more than `concurrency` runs of a run queue (of a key) between their
//                  first execution and their end, across crashes (a run keeps its slot);
//   q-leak         at the end (every run finished), no slot row and no place in line is left;
//   terminal/hang  (harness.ts) every queued run and step finishes; the engine becomes idle.
import type Database from 'better-sqlite3';
import { queue, type QueueDefinition } from '../../../sdk/index.ts';
import type { Json } from '../../../src/domain/json.ts';
import type { DoSpec, Group } from './groups.ts';
import { mulberry32 } from './prng.ts';

const QUEUE_STREAM = 0x7f4a7c15;
const KEYS = ['k1', 'k2', 'k3'] as const;

export interface SimQueue {
  name: string;
  concurrency: number;
  keyConcurrency?: number;
  rate?: { limit: number; periodMs: number };
  def: QueueDefinition;
}

export interface RunQueue {
  queue: SimQueue;
  keyed: boolean;
  priority: boolean;
}

export interface QueuePlan {
  queues: SimQueue[];
  /** Step op id -> its queue and key. */
  steps: Map<string, { queue: SimQueue; key?: string }>;
  /** Workflow name -> its run-level queue. */
  runs: Map<string, RunQueue>;
}

function genQueue(rng: ReturnType<typeof mulberry32>, name: string, allowRate: boolean): SimQueue {
  const concurrency = rng.int(1, 3);
  const keyConcurrency = rng.chance(0.5) ? rng.int(1, concurrency) : undefined;
  const rate = allowRate && rng.chance(0.4) ? { limit: rng.int(1, 3), periodMs: rng.pick([200, 1000, 5000, 60_000]) } : undefined;
  const def = queue(name, {
    concurrency,
    ...(rate ? { rateLimit: { limit: rate.limit, period: rate.periodMs } } : {}),
    ...(keyConcurrency !== undefined ? { key: { concurrency: keyConcurrency } } : {}),
  });
  return { name, concurrency, ...(keyConcurrency !== undefined ? { keyConcurrency } : {}), ...(rate ? { rate } : {}), def };
}

/** Every step.do op of a program, sequential or a group's leaf. */
function doOps(ops: readonly unknown[]): DoSpec[] {
  const out: DoSpec[] = [];
  for (const op of ops as { k: string }[]) {
    if (op.k === 'do') out.push(op as DoSpec);
    else if (op.k === 'group') for (const b of (op as Group).branches) for (const l of b.leaves) if (l.k === 'do') out.push(l);
  }
  return out;
}

export function genQueues(seed: number, programs: { name: string; ops: readonly unknown[] }[], options: { rate: boolean }): QueuePlan {
  const rng = mulberry32(seed ^ QUEUE_STREAM);
  const plan: QueuePlan = { queues: [], steps: new Map(), runs: new Map() };
  if (rng.chance(0.2)) return plan;
  const stepQueues = Array.from({ length: rng.int(1, 2) }, (_, i) => genQueue(rng, i === 0 ? 'qa' : 'qb', options.rate));
  plan.queues.push(...stepQueues);
  for (const p of programs) {
    for (const d of doOps(p.ops)) {
      if (!rng.chance(0.55)) continue;
      const q = rng.pick(stepQueues);
      const key = rng.chance(0.65) ? rng.pick(KEYS) : undefined;
      plan.steps.set(d.id, { queue: q, ...(key ? { key } : {}) });
    }
  }
  // A run queue: rate-limited ones delay starts (throttle); not generated, as run slots are
  // checked for concurrency only.
  if (rng.chance(0.45)) {
    const rq = genQueue(rng, 'qr', false);
    plan.queues.push(rq);
    for (const wf of ['simA', 'simB']) if (rng.chance(0.7)) plan.runs.set(wf, { queue: rq, keyed: rng.chance(0.6), priority: rng.chance(0.4) });
  }
  return plan;
}

/** A run's key from its input (simA: { i }, simB: an event's payload). */
export function runKeyOf(input: unknown): string {
  const s = JSON.stringify(input ?? null);
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
  return KEYS[h % KEYS.length]!;
}

export function runPriorityOf(input: unknown): number {
  const i = (input as { i?: unknown } | null)?.i;
  return typeof i === 'number' ? i % 3 : 0;
}

/** The workflow options for a workflow's queues (its step queues declared, its run queue). */
export function workflowQueueOptions(plan: QueuePlan, wf: string): { queues?: QueueDefinition[]; runs?: { queue: QueueDefinition; key?: (input: Json) => string; priority?: (input: Json) => number } } {
  const rq = plan.runs.get(wf);
  const stepQueues = plan.queues.filter((q) => q.name !== 'qr').map((q) => q.def);
  return {
    ...(stepQueues.length ? { queues: stepQueues } : {}),
    ...(rq ? { runs: { queue: rq.queue.def, ...(rq.keyed ? { key: runKeyOf } : {}), ...(rq.priority ? { priority: runPriorityOf } : {}) } } : {}),
  };
}

interface BodySpan {
  queue: SimQueue;
  key: string;
  gen: number;
  start: number;
  /** Sim clock at start. */
  at: number;
  ended: boolean;
}

/** What the bodies and the runs' first executions report, checked as they happen. */
export class QueueWatch {
  private readonly spans: BodySpan[] = [];
  /** Runs of a run queue that executed, with their queue and key. */
  readonly runsStarted = new Map<string, { queue: SimQueue; key: string; gen: number; durable?: boolean }>();

  constructor(
    private readonly plan: QueuePlan,
    private readonly violate: (what: string) => void,
    /** The engine generation is dead (crashed or stopped). */
    private readonly dead: (gen: number) => boolean,
  ) {}

  get active(): boolean {
    return this.plan.queues.length > 0;
  }

  /** A queued body starts: returns its end. */
  bodyStarted(opId: string, runId: string, step: string, gen: number, at: number): (() => void) | undefined {
    const s = this.plan.steps.get(opId);
    if (!s) return undefined;
    const key = s.key ?? '';
    const span: BodySpan = { queue: s.queue, key, gen, start: this.spans.length, at, ended: false };
    const live = this.spans.filter((b) => !b.ended && !this.dead(b.gen) && b.queue === s.queue);
    if (live.length + 1 > s.queue.concurrency) {
      this.violate(`q-concurrency: body ${runId}/${step} started in '${s.queue.name}' (engine #${gen}) with ${live.length} bodies running, concurrency ${s.queue.concurrency}`);
    }
    const sameKey = live.filter((b) => b.key === key).length;
    if (s.queue.keyConcurrency !== undefined && sameKey + 1 > s.queue.keyConcurrency) {
      this.violate(`q-concurrency: body ${runId}/${step} started in '${s.queue.name}' key '${key}' with ${sameKey} of its key running, key concurrency ${s.queue.keyConcurrency}`);
    }
    this.spans.push(span);
    return () => void (span.ended = true);
  }

  /** A run's execution began (the workflow function was called). A run holds its slot from
   *  its first execution to its end, across crashes, once its grant is durable: a slot taken
   *  in memory (the fast path) is written by the next group commit, so an engine that dies
   *  before it leaves the run in line again, with nothing of the lost execution kept (its
   *  bodies died with it, as a body's slot does). So a run counts as holding while the engine
   *  that executed it lives, and after that engine's death only if the file had its slot row
   *  then (settle()); a run whose grant was lost is checked again when it next begins. */
  runExecuted(wf: string, runId: string, input: unknown, gen: number, unfinished: (ids: string[]) => string[]): void {
    const rq = this.plan.runs.get(wf);
    if (!rq || this.dead(gen)) return;
    const prev = this.runsStarted.get(runId);
    if (prev && this.holds(prev)) {
      prev.gen = gen;
      delete prev.durable;
      return;
    }
    const key = rq.keyed ? runKeyOf(input) : '';
    const others = [...this.runsStarted].filter(([id, r]) => r.queue === rq.queue && id !== runId);
    // Runs of the queue that executed before, are not finished in the file and still hold
    // their slot (see above).
    const unfinishedNow = new Set(unfinished(others.map(([id]) => id)));
    const live = others.filter(([id, r]) => unfinishedNow.has(id) && this.holds(r));
    if (live.length + 1 > rq.queue.concurrency) {
      this.violate(`q-runs: run ${runId} began with ${live.length} runs of '${rq.queue.name}' unfinished (${live.map(([id]) => id).join(', ')}), concurrency ${rq.queue.concurrency}`);
    }
    const sameKey = live.filter(([, r]) => r.key === key);
    if (rq.queue.keyConcurrency !== undefined && sameKey.length + 1 > rq.queue.keyConcurrency) {
      this.violate(`q-runs: run ${runId} began with ${sameKey.length} runs of '${rq.queue.name}' key '${key}' unfinished (${sameKey.map(([id]) => id).join(', ')}), key concurrency ${rq.queue.keyConcurrency}`);
    }
    this.runsStarted.set(runId, { queue: rq.queue, key, gen });
  }

  /** Before the next engine starts: the engines that died wrote nothing after, so the file
   *  now says which of the runs they executed kept a durable slot. */
  settle(slotRows: (ids: string[]) => string[]): void {
    const open = [...this.runsStarted].filter(([, r]) => this.dead(r.gen) && r.durable === undefined);
    if (open.length === 0) return;
    const durable = new Set(slotRows(open.map(([id]) => id)));
    for (const [id, r] of open) r.durable = durable.has(id);
  }

  private holds(r: { gen: number; durable?: boolean }): boolean {
    return !this.dead(r.gen) || r.durable === true;
  }

  /** At the end: the rate limits over every body start, and nothing left held or in line. */
  checkEnd(db: Database.Database, clockWentBack: boolean): void {
    if (!clockWentBack) {
      for (const q of this.plan.queues) {
        if (!q.rate) continue;
        const at = this.spans.filter((b) => b.queue === q).map((b) => b.at).sort((a, b) => a - b);
        for (let i = 0; i + q.rate.limit < at.length; i++) {
          if (at[i + q.rate.limit]! - at[i]! < q.rate.periodMs) {
            this.violate(`q-rate: ${q.rate.limit + 1} bodies of '${q.name}' started within ${at[i + q.rate.limit]! - at[i]!} ms (at ${at[i]}..${at[i + q.rate.limit]}), limit ${q.rate.limit} per ${q.rate.periodMs} ms`);
            break;
          }
        }
      }
    }
    const open = (db.prepare(`SELECT count(*) AS n FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')`).get() as { n: number }).n;
    if (open > 0) return;
    const slots = db.prepare(`SELECT queue, key, run_id, step FROM queue_slots`).all() as { queue: string; key: string; run_id: string; step: string }[];
    for (const s of slots.slice(0, 3)) this.violate(`q-leak: slot of '${s.queue}' key '${s.key}' still held by ${s.run_id}/${s.step} after every run finished`);
    const waiting = db.prepare(`SELECT queue, key, run_id, step FROM queue_waiting`).all() as { queue: string; key: string; run_id: string; step: string }[];
    for (const s of waiting.slice(0, 3)) this.violate(`q-leak: ${s.run_id}/${s.step} still in line in '${s.queue}' key '${s.key}' after every run finished`);
  }

  get bodies(): number {
    return this.spans.length;
  }
}
