// Deterministic simulation of one seed on the SQLite backend.
//
// A seed decides everything: a few random workflows built from step.do / sleep / sleepUntil /
// waitForEvent / ctx.now / ctx.random / ctx.emit, queues (queues.ts) and groups of concurrent branches
// (Promise.all / race / any / allSettled over steps and small chains of steps, groups.ts),
// and a random sequence of actions against a createTestEngine on one data dir: triggers
// (duplicate run ids), events (duplicate event ids), signals, cancels, clock advances,
// forward and backward clock jumps, engine crashes (abandoned without cleanup, at a random
// moment or at an armed fault point), clean stops and restarts on the same file, sometimes
// with the clock moved while "down". Time is the manual clock and every random choice comes
// from the seed, so a failing seed replays.
//
// Then time is pushed far ahead (signalling whatever still waits) and the invariants are
// checked against the SQLite file (read-only) and the logs the step bodies kept:
//   terminal      every run reaches a terminal state
//   hang          the engine becomes idle (no session runs forever) within HANG_MS real time
//   acked         every acknowledged trigger/emit/signal is in the file (nothing acked is lost)
//   one-result    a step's result, as seen by workflow code, never differs between executions,
//                 and equals the journal; the recorded result came from a real attempt of
//                 that very step (its op id is in the value)
//   once          a recorded outcome is never rewritten (a trigger in the file logs any
//                 change) nor lost across a crash, stop or restart (compared at each one),
//                 and a step body never starts once its outcome is recorded
//   keys          every attempt of a step saw <runId>/<unique step name>; attempt <= limit
//   positions     every execution called the same step at each position, and the journal
//                 holds that step there: positions follow call order
//   order         completion orders in a run are distinct; every finished step has one
//   journal       a finished run leaves open only a race's losers (a sleep, a wait, a
//                 step.do waiting for its next attempt)
//   oracle        each group's answer in the stored output is what the combinator gives over
//                 the journal's results taken in recorded completion order (a race's winner
//                 is the branch the journal says finished first)
//   dedup         no event id and no schedule slot started two runs; a run id is created once
//   timers        no sleep, retry or wait deadline fired before its time
//   fifo          signals of one name are consumed in the order they were sent
//   replay        re-running each workflow against its final journal gives the stored outcome
//                 without running a step body or writing anything
//   after-stop    no step body starts on an engine that was stopped or crashed
//   child-once, child-result  (child runs, children.ts) exactly one child per call; the
//                 parent's recorded end and what its code got are the child's own end
//   q-concurrency, q-rate, q-runs, q-leak  (queues, queues.ts) bodies and runs within their
//                 queue's limits across crashes, no slot or place left once all finished
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestEngine, type TestEngine } from '../../../compose/testing.ts';
import { event, manual, schedule, TerminalError, workflow, type Trigger, type WorkflowDefinition } from '../../../sdk/index.ts';
import type { WorkflowFn } from '../../../sdk/types.ts';
import { DB_FILE, SqliteStore } from '../../../src/adapters/sqlite/store.ts';
import { FAULT_POINTS, FaultPoints, type FaultPoint } from '../../../src/adapters/sqlite/fault-points.ts';
import { RunStateError, UnknownRunError } from '../../../src/domain/errors.ts';
import { DEFAULT_CANCEL_GRACE_MS } from '../../../src/domain/cancel.ts';
import { lastRecordedAt, type JournalEntry } from '../../../src/domain/journal.ts';
import type { Json } from '../../../src/domain/json.ts';
import type { StepLog } from '../../../src/ports/step-log.ts';
import { RunSession } from '../../../src/runtime/run-session.ts';
import { expectGroup, genDo, genGroup, tagError, type DoSpec, type Group, type Leaf } from './groups.ts';
import { mulberry32, type Rng } from './prng.ts';
import { checkChildren, genInvokes, KID, type ChildSeen, type InvokeOp } from './children.ts';
import { childRunId } from '../../../src/domain/child-id.ts';
import { genQueues, QueueWatch, workflowQueueOptions, type QueuePlan } from './queues.ts';

type Op =
  | DoSpec
  | { k: 'sleep'; id: string; name: string; ms: number }
  | { k: 'until'; id: string; name: string; offset: number }
  | { k: 'wait'; id: string; name: string; timeout?: number }
  | { k: 'now'; id: string }
  | { k: 'random'; id: string }
  | { k: 'emit'; id: string }
  | InvokeOp
  | Group;

interface Program {
  ops: Op[];
  failAtEnd: boolean;
}

export interface SimOptions {
  /** Arm named fault points (needs the executor's hooks). */
  faultPoints?: boolean;
  /** Generate groups of concurrent branches (default true). Off: each seed builds exactly
   *  the sequential workflows it built before groups existed (regression seeds replay). */
  concurrency?: boolean;
  /** Generate child runs (step.invoke, step.start + step.result) in the seed's workflows
   *  (default true; children.ts). Off: the seed runs as it did before child runs existed. */
  children?: boolean;
  /** Generate queues (issue 39, queues.ts): step and run queues with concurrency, keys and
   *  rate limits (default true). Off: the seed runs as it did before queues existed. */
  queues?: boolean;
  /** Keep the data dir of a failing seed for inspection (default true). */
  keepFailed?: boolean;
}

export interface SeedReport {
  seed: number;
  violations: string[];
  dataDir?: string;
  runs: number;
  attempts: number;
  actions: number;
  crashes: number;
  faultCrashes: Partial<Record<FaultPoint | 'now', number>>;
  restarts: number;
  clockJumps: number;
  signals: number;
  duplicates: number;
  /** Child calls the workflows made (distinct start steps). */
  childCalls: number;
  /** Bodies of queued steps that started. */
  queuedBodies: number;
}

/** Above pid_max: process.kill(pid, 0) fails with ESRCH, as for a dead process. */
const DEAD_PID = 2 ** 22 + 4242;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const tracing = !!process.env.SIM_TRACE;
const trace: (...a: unknown[]) => void = tracing ? (...a) => console.log('[sim]', ...a) : () => {};
const turn = () => new Promise<void>((r) => setImmediate(r));

/** Chance that an op slot holds a group of concurrent branches (it then takes three slots). */
const GROUP_CHANCE = 0.14;

function genProgram(rng: Rng, canEmit: boolean, wf: string, concurrency: boolean): Program {
  const ops: Op[] = [];
  let n = 0;
  const nextId = () => `${wf}.o${++n}`;
  let slots = rng.int(1, 7);
  while (slots-- > 0) {
    let r = rng();
    if (concurrency) {
      if (r < GROUP_CHANCE) {
        ops.push(genGroup(rng, nextId));
        slots -= 2; // about the cost of three sequential ops: the per-seed cost stays put
        continue;
      }
      r = (r - GROUP_CHANCE) / (1 - GROUP_CHANCE);
    }
    // The sequential mix (with concurrency off, exactly the draws seeds always made).
    if (r < 0.38) ops.push(genDo(rng, nextId(), [0, 10, 1000, 30_000, HOUR]));
    else if (r < 0.52) ops.push({ k: 'sleep', id: nextId(), name: 'nap', ms: rng.pick([-5, 0, 1, 500, MIN, HOUR, DAY]) });
    else if (r < 0.58) ops.push({ k: 'until', id: nextId(), name: 'alarm', offset: rng.pick([-HOUR, 0, 5 * MIN, 2 * DAY]) });
    else if (r < 0.72) ops.push({ k: 'wait', id: nextId(), name: rng.pick(['reply', 'approve']), timeout: rng.chance(0.5) ? undefined : rng.pick([0, 1000, HOUR, DAY]) });
    else if (r < 0.8) ops.push({ k: 'now', id: nextId() });
    else if (r < 0.88) ops.push({ k: 'random', id: nextId() });
    else if (canEmit) ops.push({ k: 'emit', id: nextId() });
  }
  return { ops, failAtEnd: rng.chance(0.1) };
}

interface Attempt {
  runId: string;
  /** The step's unique name as the workflow code's mirror of the namer gave it. */
  step: string;
  key: string;
  attempt: number;
  limit: number;
  value: string;
  gen: number;
}

/** One call of a workflow function (one RunSession): its step calls, in call order. */
interface Execution {
  runId: string;
  gen: number;
  calls: { name: string; op: string }[];
  /** Its session had its outcome when the code made a call: later calls take no position. */
  ended?: boolean;
}

class Hang extends Error {}

/** A journal entry holds the step's outcome: it must never be rewritten, nor its body run again. */
const FINAL_STATUS = new Set(['succeeded', 'failed', 'timedout']);
/** Real time the engine gets to become idle before the seed counts as hung (SIM_HANG_MS sets it). */
const HANG_MS = Number(process.env.SIM_HANG_MS ?? 20_000);

export async function runSeed(seed: number, options: SimOptions = {}): Promise<SeedReport> {
  const rng = mulberry32(seed);
  const engineRandom = mulberry32(seed ^ 0x5bd1e995);
  const dataDir = mkdtempSync(join(tmpdir(), `tranquil-sim-${seed}-`));
  const dbFile = join(dataDir, DB_FILE);
  const violations: string[] = [];
  const violate = (what: string) => {
    if (violations.length < 20) violations.push(what);
  };
  /** Set once the seed's queues are generated (before any engine starts). */
  let watch!: QueueWatch;
  const report: SeedReport = {
    seed, violations, runs: 0, attempts: 0, actions: 0, crashes: 0, faultCrashes: {}, restarts: 0, clockJumps: 0, signals: 0, duplicates: 0, childCalls: 0, queuedBodies: 0,
  };

  // ---- what the step bodies and workflow code report ----------------------------------
  let gen = 0;
  let seqNo = 0;
  let valueNo = 0;
  let replaying = false;
  /** The clock was ever stepped backwards (jump, or a restart with an earlier clock). */
  let clockWentBack = false;
  /** Generation -> seqNo at which that engine instance died (crash or stop). */
  const deadAt = new Map<number, number>();
  const attempts: Attempt[] = [];
  const observed = new Map<string, { value: string; gen: number; seq: number }[]>();
  /** Child runs: `runId|unique name` of every start step called; every await's answer. */
  const childStarts = new Set<string>();
  const childSeen: (Omit<ChildSeen, 'valid'> & { gen: number; seq: number })[] = [];
  const executions: Execution[] = [];
  /** Per run: the step called at each position (set by checkFile for checkReplay). */
  const positions = new Map<string, { name: string; op: string }[]>();
  let ro: Database.Database | undefined;
  let t: TestEngine | undefined;
  let faults: FaultPoints | undefined;
  /** While createTestEngine runs (recovery happens inside it) its clock reads clockNow. */
  let starting = false;
  let clockNow = Date.parse('2026-03-01T00:00:00Z');
  const nowFn = () => (starting || !t ? clockNow : t.now());

  const observe = (g: number, runId: string, step: string, value: string) => {
    const key = `${runId}|${step}`;
    const list = observed.get(key) ?? [];
    list.push({ value, gen: g, seq: ++seqNo });
    if (tracing) trace(`seen ${runId}/${step} ${value}`);
    observed.set(key, list);
  };

  let stepRowQuery: Database.Statement | undefined;
  const stepRow = (runId: string, name: string) =>
    (stepRowQuery ??= ro!.prepare(`SELECT status, next_retry_at FROM steps WHERE run_seq = (SELECT created_seq FROM runs WHERE run_id = ?) AND name = ?`)).get(runId, name) as
      | { status: string; next_retry_at: number | null }
      | undefined;

  const body = async (runId: string, op: DoSpec, unique: string, attempt: number, key: string, g: number): Promise<string> => {
    if (replaying) violate(`replay: step body '${unique}' of run ${runId} ran during replay of a finished journal`);
    if (deadAt.has(g) && !process.env.SIM_IGNORE_AFTER_STOP) violate(`after-stop: step body '${unique}' of run ${runId} started on engine #${g} after it stopped or crashed`);
    // The op id in the value tells whose body produced a result the code gets back.
    const value = `${op.id}@${seed}.${++valueNo}`;
    if (ro && !replaying) {
      const row = stepRow(runId, unique);
      if (row && FINAL_STATUS.has(row.status)) violate(`once: body of ${runId}/${unique} ran attempt ${attempt} after its outcome (${row.status}) was recorded`);
      if (attempt > 1 && row?.status === 'retrying' && row.next_retry_at != null && row.next_retry_at > nowFn()) {
        violate(`timers: attempt ${attempt} of ${runId}/${unique} began at ${nowFn()} before its nextRetryAt ${row.next_retry_at}`);
      }
    }
    attempts.push({ runId, step: unique, key, attempt, limit: op.limit, value, gen: g });
    trace(`body ${runId}/${unique} attempt ${attempt} gen ${g} at ${nowFn()}`);
    const ended = replaying ? undefined : watch.bodyStarted(op.id, runId, unique, g, nowFn());
    try {
      for (let i = 0; i < op.turns; i++) await turn();
      if (attempt <= op.fails) throw op.terminal ? new TerminalError(`terminal at attempt ${attempt}`) : new Error(`fail at attempt ${attempt}`);
      return value;
    } finally {
      ended?.();
    }
  };

  const fnFor = (wf: string, program: Program): WorkflowFn => async ({ step, ctx, input }) => {
    const g = gen;
    const runId = ctx.runId;
    if (!replaying) watch.runExecuted(wf, runId, input, g, unfinished);
    const exec: Execution = { runId, gen: g, calls: [] };
    executions.push(exec);
    if (tracing) trace(`exec ${runId} gen ${g} #${executions.length - 1}`);
    const seen = new Map<string, number>();
    /** The engine's naming and positions, mirrored: called right before each step call, so
     *  calls[i] is the step the code called i-th (its journal position if positions follow
     *  call order). */
    const called = (base: string, op: string): string => {
      const k = (seen.get(base) ?? 0) + 1;
      seen.set(base, k);
      const name = k === 1 ? base : `${base}#${k}`;
      // A crashed engine's session keeps running in this process (a real crash would end it):
      // what it calls after the crash (a fault thrown into ctx.now, say) is not an execution.
      if (!deadAt.has(g) && !exec.ended) exec.calls.push({ name, op });
      if (tracing) trace(`call ${runId} ${name} op ${op} at ${exec.calls.length - 1}`);
      return name;
    };
    const tag = (e: unknown) => tagError((e as Error).name, (e as Error).message);
    // A child's end is waited for by a waitForEvent('child:<id>') the engine makes itself, and
    // only when it makes it: step.invoke makes it once its start step succeeded (never when
    // that step failed, say the run was cancelled before it), a continuation later, after
    // whatever other branch code ran meanwhile; a second step.result of a child whose end was
    // taken makes none. So that position is mirrored where the engine takes it, in the
    // waitForEvent of this same step object, which withChildSteps builds the child calls on.
    const childOps = new Map<string, { op: string; waits: number }>();
    const engineWait = step.waitForEvent.bind(step);
    step.waitForEvent = (<T>(name: string, options?: { timeout?: number }) => {
      const c = name.startsWith('child:') ? childOps.get(name) : undefined;
      if (c) called(name, `${c.op}.w${++c.waits === 1 ? '' : c.waits}`);
      return engineWait<T>(name, options);
    }) as typeof step.waitForEvent;
    // ctx.now/ctx.random throw at once in a session that already has its outcome (an engine
    // stop aborts every session before the stop completes): that call took no position, and
    // neither does any later one of this execution (the outcome is final), so they are not
    // its calls (seed 6435430: a sibling branch's step called after it was counted).
    const journaled = <T>(base: string, op: string, read: () => T): T => {
      const before = exec.calls.length;
      called(base, op);
      try {
        return read();
      } catch (e) {
        if ((e as Error).message === 'run finished') {
          exec.calls.length = before;
          exec.ended = true;
        }
        throw e;
      }
    };
    const now = (op: string) => journaled('ctx.now', op, () => ctx.now());
    const doStep = (op: DoSpec): Promise<Json> => {
      const unique = called(op.name, op.id);
      const q = qplan.steps.get(op.id);
      const opts = { retries: { limit: op.limit, backoff: op.backoff, delay: op.delay, jitter: false }, ...(q ? { queue: q.queue.def, ...(q.key ? { key: q.key } : {}) } : {}) };
      return step.do(op.name, opts, ({ attempt, idempotencyKey }) => body(runId, op, unique, attempt, idempotencyKey, g)).then(
        (v) => {
          if (typeof v !== 'string' || !v.startsWith(`${op.id}@`)) violate(`one-result: ${runId}/${unique} (op ${op.id}) got ${JSON.stringify(v)}, which its own body never returned`);
          observe(g, runId, unique, JSON.stringify(v));
          return v;
        },
        (e: unknown) => {
          observe(g, runId, unique, tag(e));
          throw e;
        },
      );
    };
    const waitStep = (op: { id: string; name: string; timeout?: number }): Promise<Json> => {
      const unique = called(op.name, op.id);
      return step.waitForEvent<Json>(op.name, op.timeout === undefined ? {} : { timeout: op.timeout }).then(
        (p) => (observe(g, runId, unique, JSON.stringify(p)), p),
        (e: unknown) => {
          observe(g, runId, unique, tag(e));
          throw e;
        },
      );
    };
    const leaf = (l: Leaf): Promise<Json> => {
      if (l.k === 'do') return doStep(l);
      if (l.k === 'wait') return waitStep(l);
      called(l.name, l.id);
      return step.sleep(l.name, l.ms).then(() => 'slept');
    };
    const branch = (b: Group['branches'][number]): Promise<Json> => {
      let p: Promise<Json> =
        b.leaves.length === 1
          ? leaf(b.leaves[0]!)
          : (async () => {
              const values: Json[] = [];
              for (const l of b.leaves) values.push(await leaf(l));
              return values;
            })();
      for (let i = 0; i < b.hops; i++) p = p.then((v) => v);
      return p;
    };
    /** One child call: step.invoke, or step.start then step.result (maybe twice). */
    const invoke = async (op: InvokeOp): Promise<Json> => {
      const unique = called(op.name, op.id);
      childStarts.add(`${runId}|${unique}`);
      const childId = childRunId(runId, unique);
      const saw = (v: string) => {
        childSeen.push({ runId, childId, value: v, gen: g, seq: ++seqNo });
        return v;
      };
      const got = (p: Promise<Json>) => p.then((v) => saw(JSON.stringify(v)), (e: unknown) => saw(tag(e)));
      const input = { from: runId };
      const start = op.abandon ? { onParentCancel: 'abandon' as const } : {};
      const timeout = op.timeout === undefined ? {} : { timeout: op.timeout };
      childOps.set(`child:${childId}`, { op: op.id, waits: 0 });
      if (op.mode === 'invoke') {
        return got(step.invoke<Json>(op.name, KID, input, { ...start, ...timeout }));
      }
      let id: string;
      try {
        id = await step.start(op.name, KID, input, start);
      } catch (e) {
        return tag(e);
      }
      observe(g, runId, unique, JSON.stringify(id));
      if (id !== childId) violate(`child-once: step.start ${runId}/${unique} returned ${id}, the derived child id is ${childId}`);
      const first = await got(step.result<Json>(id, timeout));
      if (!op.twice) return first;
      // Awaiting the same child again: the same end, without a step. A wait that took no end
      // (it timed out, or the run's cancel reached it) is forgotten: the next one waits anew
      // (its position is mirrored by the waitForEvent wrapper above, as it is made).
      const tookEnd = !first.startsWith('caught:') || first.startsWith('caught:ChildRunError:');
      const second = await got(step.result<Json>(id));
      if (tookEnd && second !== first && !deadAt.has(g)) violate(`child-result: ${runId} awaited child ${id} twice and got ${first} then ${second}`);
      return [first, second];
    };
    const out: Json[] = [];
    for (const op of program.ops) {
      switch (op.k) {
        case 'do':
          try {
            out.push(await doStep(op));
          } catch (e) {
            out.push(tag(e));
          }
          break;
        case 'sleep':
          called(op.name, op.id);
          await step.sleep(op.name, op.ms);
          out.push(now(op.id));
          break;
        case 'until': {
          const at = now(op.id) + op.offset;
          called(op.name, op.id);
          await step.sleepUntil(op.name, at);
          out.push(now(op.id));
          break;
        }
        case 'wait':
          try {
            out.push(await waitStep(op));
          } catch (e) {
            out.push(tag(e));
          }
          break;
        case 'now':
          out.push(now(op.id));
          break;
        case 'random':
          out.push(journaled('ctx.random', op.id, () => ctx.random()));
          break;
        case 'emit':
          called('emit:sim.emitted', op.id);
          await ctx.emit('sim.emitted', { from: runId });
          break;
        case 'invoke':
          out.push(await invoke(op));
          break;
        case 'group': {
          const settled = op.branches.map(branch);
          let r: Json;
          try {
            if (op.comb === 'all') r = await Promise.all(settled);
            else if (op.comb === 'race') r = await Promise.race(settled);
            else if (op.comb === 'any') r = await Promise.any(settled);
            else r = (await Promise.allSettled(settled)).map((s): Json => (s.status === 'fulfilled' ? { ok: s.value } : { err: tag(s.reason) }));
          } catch (e) {
            r = tag(e);
          }
          out.push({ g: op.id, r });
          break;
        }
      }
    }
    if (program.failAtEnd) throw new Error(`${wf} fails on purpose`);
    return out;
  };

  // ---- the workflows of this seed -------------------------------------------------------
  clockNow += rng.int(0, DAY);
  const programs = new Map<string, Program>();
  const concurrency = options.concurrency ?? true;
  const defs: WorkflowDefinition[] = [];
  /** Every group of every program, and every leaf of a group by op id. */
  const groups: Group[] = [];
  const leaves = new Map<string, Leaf>();
  const triggersOf = new Map<string, Trigger[]>();
  const add = (name: string, program: Program, triggers: Trigger[]) => {
    programs.set(name, program);
    triggersOf.set(name, triggers);
    for (const op of program.ops) {
      if (op.k !== 'group') continue;
      groups.push(op);
      for (const b of op.branches) for (const l of b.leaves) leaves.set(l.id, l);
    }
  };
  add('simA', genProgram(rng, true, 'simA', concurrency), [manual(), event('sim.ping')]);
  add('simB', genProgram(rng, false, 'simB', concurrency), [event('sim.ping'), event('sim.emitted')]);
  if (rng.chance(0.3)) add('tick', genProgram(rng, false, 'tick', concurrency), [schedule('0 */6 * * *', { catchUp: rng.pick(['latest', 'all', 'none'] as const) })]);
  if (options.children ?? true) {
    const parents = ['simA', 'simB'].map((name) => ({ name, ops: programs.get(name)!.ops as unknown[] }));
    const kids = genInvokes(seed, parents);
    if (kids.any) {
      const kid = genProgram(kids.rng, false, KID, concurrency);
      kid.ops = kid.ops.slice(0, 2);
      add(KID, kid, [manual()]);
    }
  }
  // Queues come last, from a stream of their own: the programs above are the seed's as before.
  const qplan: QueuePlan = options.queues ?? true
    ? genQueues(seed, ['simA', 'simB', 'tick'].filter((n) => programs.has(n)).map((name) => ({ name, ops: programs.get(name)!.ops })), { rate: true })
    : { queues: [], steps: new Map(), runs: new Map() };
  watch = new QueueWatch(qplan, violate, (g) => deadAt.has(g));
  if (tracing && qplan.queues.length) trace(`queues: ${JSON.stringify(qplan.queues.map(({ def: _, ...q }) => q))} steps ${JSON.stringify([...qplan.steps].map(([id, s]) => `${id}:${s.queue.name}/${s.key ?? ''}`))} runs ${JSON.stringify([...qplan.runs].map(([wf, r]) => `${wf}:${r.queue.name}${r.keyed ? '/key' : ''}${r.priority ? '/prio' : ''}`))}`);
  /** Of these runs, those the file shows unfinished (for the run-slot count). */
  const unfinished = (ids: string[]): string[] => {
    if (!ro || ids.length === 0) return [];
    const st = ro.prepare(`SELECT status FROM runs WHERE run_id = ?`);
    return ids.filter((id) => !['succeeded', 'failed', 'cancelled'].includes((st.get(id) as { status: string } | undefined)?.status ?? 'succeeded'));
  };
  /** Of these runs, those whose run slot's row is in the file (the grant is durable). */
  const slotRows = (ids: string[]): string[] => {
    if (!ro || ids.length === 0) return [];
    const st = ro.prepare(`SELECT 1 FROM queue_slots WHERE run_id = ? AND step = ''`);
    return ids.filter((id) => st.get(id) !== undefined);
  };
  for (const [name, program] of programs) {
    defs.push(workflow(name, workflowQueueOptions(qplan, name), (w) => {
      for (const tr of triggersOf.get(name)!) w.trigger(tr);
      w.run(fnFor(name, program));
    }));
  }
  const manualWorkflows = ['simA'];
  if (process.env.SIM_TRACE) for (const [name, p] of programs) trace(`program ${name}: ${JSON.stringify(p)}`);

  // ---- engine lifecycle ------------------------------------------------------------------
  let live = false;

  const markDead = () => {
    if (!deadAt.has(gen)) deadAt.set(gen, seqNo);
    trace(`engine #${gen} stopped cleanly`);
  };

  const crashed = () => faults?.crashedAt !== undefined;

  const noteCrash = () => {
    if (!faults?.crashedAt) return;
    report.crashes++;
    report.faultCrashes[faults.crashedAt] = (report.faultCrashes[faults.crashedAt] ?? 0) + 1;
    live = false;
  };

  /** The process "dies" now: no cleanup, nothing written after this. */
  const crashNow = () => {
    if (!t || !live) return;
    clockNow = t.now();
    faults!.crashNow();
    noteCrash();
  };

  const start = async (shiftMs: number) => {
    for (let tries = 0; tries < 20; tries++) {
      if (existsDb()) {
        // The previous owner "died": as the OS would, the dead pid no longer holds the lease.
        const w = new Database(dbFile);
        w.prepare(`UPDATE owner SET pid = ? WHERE id = 1`).run(DEAD_PID);
        w.close();
      }
      checkOutcomesKept(`after engine #${gen} ${deadAt.has(gen) ? 'died' : 'ran'}`);
      watch.settle(slotRows);
      gen++;
      report.restarts++;
      faults = new FaultPoints();
      const myGen = gen;
      faults.onCrash(() => {
        trace(`engine #${myGen} crashed at ${faults?.crashedAt}`);
        if (!deadAt.has(myGen)) deadAt.set(myGen, seqNo);
      });
      if (options.faultPoints && rng.chance(0.35)) faults.crash(rng.pick(FAULT_POINTS), rng.int(1, 6));
      if (shiftMs < 0) clockWentBack = true;
      clockNow += shiftMs;
      shiftMs = 0;
      starting = true;
      try {
        // Recovery runs inside (it waits until idle): a session that never ends hangs it.
        t = await guard('start', createTestEngine({ dataDir, workflows: defs, startAt: clockNow, random: engineRandom, faults, durability: 'normal', maxConcurrentRuns: rng.pick([1, 4, 100]) }));
        starting = false;
        live = true;
        if (!ro) {
          watchRewrites();
          ro = new Database(dbFile, { readonly: true });
        }
        if (crashed()) {
          clockNow = t.now();
          noteCrash();
          continue;
        }
        return;
      } catch (err) {
        starting = false;
        if (!crashed()) throw err;
        noteCrash();
      }
    }
    throw new Error('engine did not come up in 20 tries');
  };

  const existsDb = () => existsSync(dbFile);

  /** Every step outcome the file held at the last restart, by run|seq. */
  const kept = new Map<string, string>();
  /** After every crash, stop and restart: each recorded outcome is still there, unchanged. */
  const checkOutcomesKept = (when: string) => {
    if (!ro) return;
    const rows = ro.prepare(`SELECT run_id, seq, name, status, result, error, done_order FROM steps WHERE status IN ('succeeded', 'failed', 'timedout')`).all() as
      { run_id: string; seq: number; name: string; status: string; result: string | null; error: string | null; done_order: number | null }[];
    const now = new Map(rows.map((r) => [`${r.run_id}|${r.seq}`, JSON.stringify([r.name, r.status, r.result, r.error, r.done_order])]));
    for (const [k, v] of kept) {
      if (now.get(k) !== v) violate(`once: step ${k} held ${v}; ${when} it holds ${now.get(k) ?? 'nothing'}`);
    }
    for (const [k, v] of now) kept.set(k, v);
  };

  /** A trigger in the sim's file logs every change to a step whose outcome is recorded
   *  (checked at the end: an outcome is written once and never replaced). */
  const watchRewrites = () => {
    const w = new Database(dbFile);
    w.exec(`CREATE TABLE IF NOT EXISTS sim_rewrites (run_id TEXT, seq INTEGER, name TEXT, was TEXT, now TEXT);
      CREATE TRIGGER IF NOT EXISTS sim_rewrite BEFORE UPDATE ON steps
      WHEN old.status IN ('succeeded', 'failed', 'timedout') AND (new.status IS NOT old.status OR new.name IS NOT old.name
        OR new.result IS NOT old.result OR new.error IS NOT old.error OR new.done_order IS NOT old.done_order)
      BEGIN INSERT INTO sim_rewrites VALUES (old.run_id, old.seq, old.name, old.status || ' ' || coalesce(old.result, old.error, ''),
        new.status || ' ' || coalesce(new.result, new.error, '')); END;`);
    w.close();
  };

  const stopClean = async () => {
    if (!t || !live) return;
    clockNow = t.now();
    await t.close();
    markDead();
    live = false;
  };

  // ---- actions ---------------------------------------------------------------------------
  const createdOnce = new Set<string>();
  const knownRuns: string[] = [];
  const emitAcks = new Map<string, string[]>();
  const signalAcks: { runId: string; name: string; n: number }[] = [];
  // Runs whose cancel the engine accepted: each must end within the cancel grace, crashes or not.
  const cancelAcks = new Set<string>();
  // The highest clock reading seen: a cancel delivered before a backward jump keeps its
  // grace deadline on the clock it was delivered by.
  let clockHigh = 0;
  const seeClock = () => {
    clockHigh = Math.max(clockHigh, clockNow, t ? t.now() : 0);
  };
  let runNo = 0;
  let signalNo = 0;

  const expectDocumented = (err: unknown, what: string, allowed: Function[]) => {
    if (crashed() || deadAt.has(gen)) return;
    if (!allowed.some((C) => err instanceof C)) violate(`api: ${what} threw ${(err as Error)?.name}: ${(err as Error)?.message}`);
  };

  /** A session that never ends keeps the engine busy forever: fail the seed, naming it. */
  const guard = async <T>(what: string, p: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), HANG_MS)));
    const res = await Promise.race([p.then((v) => ({ v })), hung]);
    clearTimeout(timer);
    if (res !== 'hung') return res.v;
    if (tracing && t) {
      const ex = (t.engine as unknown as { executor: Record<string, any> }).executor;
      trace('hung:', JSON.stringify({ running: ex.running, ready: ex.ready.length, queued: ex.queue.size, fanIn: ex.fanIn.pending, stepWaiting: ex.queues.stepWaiting, catchingUp: ex.o.scheduler.catchingUp, retrying: ex.o.scheduler.retrying, sessions: ex.active.values().map((a: any) => [a.session?.slotBound, a.session?.inflight, a.session?.slotWaits]) }));
    }
    const busy = ro ? (ro.prepare(`SELECT run_id, status FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')`).all() as { run_id: string; status: string }[]) : [];
    throw new Hang(`hang: ${what} did not become idle within ${HANG_MS / 1000}s of real time; unfinished runs: ${busy.map((r) => `${r.run_id} (${r.status})`).join(', ')}`);
  };

  try {
    await start(0);
    const nActions = rng.int(12, 40);
    for (let i = 0; i < nActions; i++) {
      seeClock();
      if (!live) await start(rng.pick([0, 0, 0, MIN, HOUR, DAY, -HOUR, -DAY]));
      report.actions++;
      const engine = t!.engine;
      const r = rng();
      seeClock();
      trace(`action ${i} r=${r.toFixed(3)} gen ${gen} now ${t!.now()}`);
      try {
        if (r < 0.22) {
          const runId = rng.chance(0.4) && knownRuns.length ? rng.pick(knownRuns) : `r${++runNo}`;
          const wf = rng.pick(manualWorkflows);
          const res = await engine.trigger(wf, { i }, { runId });
          if (res.created) {
            if (createdOnce.has(runId)) violate(`dedup: run id ${runId} reported created twice`);
            createdOnce.add(runId);
            knownRuns.push(runId);
          } else report.duplicates++;
        } else if (r < 0.32) {
          const id = `e${rng.int(1, 8)}`;
          const res = await engine.emit('sim.ping', { id }, { id });
          const before = emitAcks.get(id);
          if (before) {
            report.duplicates++;
            if (!res.duplicate) violate(`dedup: event ${id} emitted twice was not reported duplicate`);
            if (JSON.stringify(before) !== JSON.stringify(res.runIds)) violate(`dedup: event ${id} answered ${res.runIds} after ${before}`);
          } else emitAcks.set(id, res.runIds);
          for (const id2 of res.runIds) if (!knownRuns.includes(id2)) knownRuns.push(id2);
        } else if (r < 0.47) {
          if (knownRuns.length === 0) continue;
          const runId = rng.pick(knownRuns);
          const name = rng.pick(['reply', 'approve']);
          const n = ++signalNo;
          try {
            await engine.signal(runId, name, { n });
            signalAcks.push({ runId, name, n });
            report.signals++;
          } catch (err) {
            expectDocumented(err, `signal(${runId})`, [RunStateError, UnknownRunError]);
          }
        } else if (r < 0.5) {
          if (knownRuns.length === 0) continue;
          const runId = rng.pick(knownRuns);
          try {
            await engine.runs.cancel(runId);
            cancelAcks.add(runId);
            trace(`cancel ${runId} accepted`);
          } catch (err) {
            expectDocumented(err, `cancel(${runId})`, [RunStateError]);
          }
        } else if (r < 0.68) {
          await guard('advance', t!.advance(rng.pick([0, 1, 500, 30_000, 5 * MIN, HOUR, 7 * HOUR, DAY])));
        } else if (r < 0.74) {
          // Forward jump: the clock leaps; due timers fire in order, no idle in between.
          report.clockJumps++;
          t!.clock.set(t!.now() + rng.pick([MIN, HOUR, DAY, 3 * DAY]));
        } else if (r < 0.8) {
          // Backward jump (NTP step, manual change), taken while nothing is in flight.
          report.clockJumps++;
          await guard('idle', t!.idle());
          if (live && !crashed()) {
            clockWentBack = true;
            t!.clock.set(t!.now() - rng.pick([1000, MIN, HOUR, DAY]), true);
          }
        } else if (r < 0.88) {
          for (let k = rng.int(0, 6); k > 0; k--) await turn();
          crashNow();
        } else if (r < 0.92) {
          await stopClean();
        } else {
          if (options.faultPoints && faults && !crashed()) faults.crash(rng.pick(FAULT_POINTS), rng.int(1, 4));
        }
      } catch (err) {
        if (err instanceof Hang) throw err;
        if (!crashed()) violate(`api: action ${i} threw ${(err as Error)?.name}: ${(err as Error)?.message}`);
      }
      if (crashed()) {
        if (live) {
          clockNow = t!.now();
          noteCrash();
        }
        continue;
      }
      if (live) {
        if (rng.chance(0.6)) await guard('idle', t!.idle());
        else for (let k = rng.int(0, 4); k > 0; k--) await turn();
        if (crashed()) {
          clockNow = t!.now();
          noteCrash();
        }
      }
    }

    // ---- push time far ahead until everything is terminal ---------------------------------
    // A schedule keeps starting runs, so "stuck" means: not terminal and older than STUCK_MS
    // of pushed time (every program finishes well within it once its waits are signalled).
    const STUCK_MS = 9 * DAY;
    const stuckRows = () =>
      ro!.prepare(`SELECT run_id, workflow, status FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled') AND created_at < ?`).all(nowFn() - STUCK_MS) as { run_id: string; workflow: string; status: string }[];
    // Runs that hold a run queue's slot while they sleep or wait let the others in one by one.
    const rounds = qplan.runs.size > 0 ? 40 : 12;
    for (let round = 0; round < rounds; round++) {
      if (!live) await start(0);
      if (faults) faults.disarm();
      await guard('idle', t!.idle());
      if (crashed()) {
        noteCrash();
        continue;
      }
      if (round === 0 && cancelAcks.size > 0) {
        // Before any wait is answered (an answer would wake a run whose cancel was lost): past
        // the grace, every accepted cancel has ended its run.
        seeClock();
        await guard('advance', t!.advance(clockHigh - t!.now() + DEFAULT_CANCEL_GRACE_MS + 1));
        const status = ro!.prepare(`SELECT status FROM runs WHERE run_id = ?`);
        for (const id of cancelAcks) {
          const st = (status.get(id) as { status: string } | undefined)?.status;
          if (st && !['succeeded', 'failed', 'cancelled'].includes(st)) violate(`cancel: run ${id}'s accepted cancel was lost: still ${st} past the grace`);
        }
      }
      const open = ro!.prepare(`SELECT run_id, status FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')`).all() as { run_id: string; status: string }[];
      if (open.length === 0 || (round >= 4 && stuckRows().length === 0)) break;
      // Answer every open wait, again and again (a program may wait several times in a row).
      for (let pass = 0; pass < 12; pass++) {
        const waiting = ro!.prepare(`SELECT r.run_id, s.name FROM runs r JOIN steps s ON s.run_id = r.run_id AND s.kind = 'wait' AND s.status = 'waiting'
                                    AND s.name NOT LIKE 'child:%' WHERE r.status = 'waiting'`).all() as { run_id: string; name: string }[];
        if (waiting.length === 0) break;
        for (const w of waiting) {
          const n = ++signalNo;
          const name = w.name.replace(/#\d+$/, '');
          try {
            await t!.engine.signal(w.run_id, name, { n, final: true });
            signalAcks.push({ runId: w.run_id, name, n });
          } catch (err) {
            // A run with several open waits (a race) may finish on the signal before this one.
            expectDocumented(err, `signal(${w.run_id})`, [RunStateError]);
          }
        }
        await guard('idle', t!.idle());
      }
      await guard('advance', t!.advance('3d'));
      // A run holding a run queue's slot may sleep until a time far past 3 days (its clock once
      // read far ahead, then stepped back): the runs in line behind it wait for that time.
      if (qplan.runs.size > 0 && round >= 4 && stuckRows().length > 0) {
        const next = (ro!.prepare(`SELECT min(wake_at) AS at FROM runs WHERE status IN ('sleeping', 'waiting') AND wake_at > ?`).get(t!.now()) as { at: number | null }).at;
        if (next !== null) await guard('advance', t!.advance(next - t!.now()));
      }
    }
    for (const r of stuckRows()) violate(`terminal: run ${r.run_id} (${r.workflow}) still ${r.status} after time was pushed ahead`);
    if (live) await stopClean();

    checkOutcomesKept('at the end');
    checkFile();
    await checkRestartChangesNothing();
    await checkReplay();
  } catch (err) {
    violate(err instanceof Hang ? err.message : `harness: ${(err as Error)?.stack ?? err}`);
  } finally {
    if (live && t) await t.close().catch(() => {});
    ro?.close();
    if (violations.length === 0 || options.keepFailed === false) rmSync(dataDir, { recursive: true, force: true });
    else report.dataDir = dataDir;
  }
  report.attempts = attempts.length;
  report.childCalls = childStarts.size;
  report.queuedBodies = watch?.bodies ?? 0;
  return report;

  // ---- invariants --------------------------------------------------------------------------
  function checkFile(): void {
    const db = new Database(dbFile, { readonly: true });
    try {
      const runs = db.prepare(`SELECT * FROM runs`).all() as { run_id: string; workflow: string; status: string; output: string | null; error: string | null }[];
      report.runs = runs.length;
      const byId = new Map(runs.map((r) => [r.run_id, r]));
      for (const id of createdOnce) if (!byId.has(id)) violate(`acked: run ${id} was acknowledged as created but is not in the file`);
      const events = db.prepare(`SELECT id, run_ids FROM events`).all() as { id: string; run_ids: string }[];
      const eventRuns = new Map<string, string>();
      for (const e of events) {
        for (const rid of JSON.parse(e.run_ids) as string[]) {
          if (eventRuns.has(rid)) violate(`dedup: run ${rid} started by events ${eventRuns.get(rid)} and ${e.id}`);
          eventRuns.set(rid, e.id);
          if (!byId.has(rid)) violate(`acked: event ${e.id} names run ${rid} that does not exist`);
        }
      }
      for (const [id, runIds] of emitAcks) {
        const row = events.find((e) => e.id === id);
        if (!row) violate(`acked: event ${id} was acknowledged but is not in the file`);
        else if (row.run_ids !== JSON.stringify(runIds)) violate(`acked: event ${id} holds ${row.run_ids}, acknowledged ${JSON.stringify(runIds)}`);
      }
      for (const r of runs) if (r.workflow === 'simB' && !eventRuns.has(r.run_id)) violate(`dedup: simB run ${r.run_id} belongs to no event`);
      const slots = db.prepare(`SELECT schedule_id, slot_at, run_id FROM schedule_slots WHERE run_id IS NOT NULL`).all() as { schedule_id: string; slot_at: number; run_id: string }[];
      const slotRuns = new Map<string, number>();
      for (const s of slots) {
        if (slotRuns.has(s.run_id)) violate(`dedup: run ${s.run_id} started by two schedule slots`);
        slotRuns.set(s.run_id, s.slot_at);
      }
      for (const r of runs) if (r.workflow === 'tick' && !slotRuns.has(r.run_id)) violate(`dedup: tick run ${r.run_id} has no slot (ledger pruned?)`);

      // Signals: acked ones are stored; consumed in send order per (run, name).
      const signals = db.prepare(`SELECT id, run_id, name, payload, consumed_seq FROM signals ORDER BY id`).all() as { id: number; run_id: string; name: string; payload: string; consumed_seq: number | null }[];
      for (const a of signalAcks) {
        if (!signals.some((s) => s.run_id === a.runId && s.name === a.name && (JSON.parse(s.payload) as { n: number }).n === a.n)) {
          violate(`acked: signal #${a.n} '${a.name}' to ${a.runId} was acknowledged but is not in the file`);
        }
      }
      const lastSeq = new Map<string, number>();
      for (const s of signals) {
        if (s.consumed_seq == null) continue;
        const k = `${s.run_id}|${s.name}`;
        if ((lastSeq.get(k) ?? -1) >= s.consumed_seq) violate(`fifo: signals '${s.name}' of ${s.run_id} consumed out of order`);
        lastSeq.set(k, s.consumed_seq);
        const entry = db.prepare(`SELECT kind, status, result FROM steps WHERE run_id = ? AND seq = ?`).get(s.run_id, s.consumed_seq) as { kind: string; status: string; result: string } | undefined;
        if (!entry || entry.kind !== 'wait' || entry.status !== 'succeeded' || entry.result !== s.payload) {
          violate(`acked: signal ${s.id} marked consumed by step ${s.consumed_seq} of ${s.run_id}, which does not hold it`);
        }
      }

      const store = new SqliteStore(db);
      for (const r of runs) checkRun(r, store.journal(r.run_id));
      if (watch.active) watch.checkEnd(db, clockWentBack);
      if (childStarts.size > 0) {
        const valid = (o: { gen: number; seq: number }) => !deadAt.has(o.gen) || o.seq <= deadAt.get(o.gen)!;
        checkChildren(db, runs, (id) => store.journal(id), childStarts, childSeen.map((c) => ({ ...c, valid: valid(c) })), violate);
      }
      const rewrites = db.prepare(`SELECT * FROM sim_rewrites`).all() as { run_id: string; seq: number; name: string; was: string; now: string }[];
      for (const w of rewrites) violate(`once: ${w.run_id}/${w.name} (seq ${w.seq}) had its outcome '${w.was}' rewritten to '${w.now}'`);
      // Every attempt: the run's own key, within the limit.
      for (const a of attempts) {
        if (a.key !== `${a.runId}/${a.step}`) violate(`keys: attempt ${a.attempt} of ${a.runId}/${a.step} saw key ${a.key}`);
        if (a.attempt < 1 || a.attempt > a.limit) violate(`keys: ${a.runId}/${a.step} ran attempt ${a.attempt} of limit ${a.limit}`);
      }
      // Workflow code saw one value per step, across every execution, equal to the journal.
      for (const [k, list] of observed) {
        const [runId, step] = k.split('|') as [string, string];
        const valid = list.filter((o) => !deadAt.has(o.gen) || o.seq <= deadAt.get(o.gen)!);
        const values = new Set(valid.map((o) => o.value));
        if (values.size > 1) violate(`one-result: ${runId}/${step} was seen as ${[...values].join(' and ')}`);
        const row = db.prepare(`SELECT status, result, error FROM steps WHERE run_id = ? AND name = ?`).get(runId, step) as { status: string; result: string | null; error: string | null } | undefined;
        if (!row || values.size === 0) continue;
        const recorded = row.status === 'succeeded' ? row.result! : row.error ? `caught:${(JSON.parse(row.error) as { name: string; message: string }).name}:${(JSON.parse(row.error) as { message: string }).message}` : undefined;
        if (recorded !== undefined && !values.has(recorded)) violate(`one-result: ${runId}/${step} journal holds ${recorded}, code saw ${[...values].join(', ')}`);
      }
    } finally {
      db.close();
    }
  }

  /** One run's journal against what its executions called and what its output says. */
  function checkRun(r: { run_id: string; status: string; output: string | null }, journal: JournalEntry[]): void {
    const runId = r.run_id;
    const bySeq: JournalEntry[] = [];
    for (const e of journal) bySeq[e.seq] = e;
    // Positions follow call order: every execution called the same step at each position,
    // and the journal holds that step there.
    const calls: { name: string; op: string }[] = [];
    let conflict = false;
    for (const ex of executions) {
      if (ex.runId !== runId) continue;
      ex.calls.forEach((c, i) => {
        const before = calls[i];
        if (!before) calls[i] = c;
        else if (!conflict && (before.op !== c.op || before.name !== c.name)) {
          conflict = true;
          violate(`positions: run ${runId} position ${i} was called as ${before.name} (op ${before.op}) in one execution, ${c.name} (op ${c.op}) in another`);
        }
      });
    }
    positions.set(runId, calls);
    const orders = new Set<number>();
    for (const e of journal) {
      const c = calls[e.seq];
      if (!c) violate(`positions: run ${runId} journals ${e.name} at ${e.seq}, a position no execution called`);
      else if (c.name !== e.name) violate(`positions: run ${runId} journals ${e.name} at ${e.seq}, where the code called ${c.name}`);
      if (e.order !== undefined) {
        if (orders.has(e.order)) violate(`order: run ${runId} has two steps with completion order ${e.order}`);
        orders.add(e.order);
      } else if (FINAL_STATUS.has(e.status) && (e.kind === 'do' || e.kind === 'sleep' || e.kind === 'wait')) {
        violate(`order: ${runId}/${e.name} is ${e.status} without a completion order`);
      }
      checkEntry(runId, e, bySeq[e.seq + 1]);
    }
    if (r.status !== 'succeeded' && r.status !== 'failed') return;
    // A finished run leaves only a race's losers open (a sleep or wait not awaited, a step.do
    // waiting for its next attempt); every other step it called holds its outcome.
    for (let i = 0; i < calls.length; i++) {
      const e = bySeq[i];
      if (e && FINAL_STATUS.has(e.status)) continue;
      const leaf = leaves.get(calls[i]!.op);
      const what = `${calls[i]!.name} at ${i}${e ? ` is still ${e.status}` : ' has nothing recorded'}`;
      if (!leaf) {
        violate(`journal: run ${runId} ${r.status} while ${what}`);
        continue;
      }
      if (leaf.k === 'do' && !retryPending(runId, calls[i]!.name, leaf, e)) violate(`journal: run ${runId} ${r.status} while step.do ${what}, no retry pending`);
    }
    if (r.status !== 'succeeded' || r.output === null) return;
    // The oracle: each group's answer follows from the journal's results and completion order.
    const opAt = new Map(calls.map((c, i) => [c.op, i]));
    const entryOf = (op: string) => {
      const i = opAt.get(op);
      return i === undefined ? undefined : bySeq[i];
    };
    for (const item of JSON.parse(r.output) as Json[]) {
      if (item === null || typeof item !== 'object' || Array.isArray(item) || typeof item.g !== 'string') continue;
      const group = groups.find((gr) => gr.id === item.g);
      if (!group) continue;
      const expected = expectGroup(group, entryOf);
      for (const p of expected.problems) violate(`oracle: run ${runId}: ${p}`);
      if (expected.r !== undefined && JSON.stringify(expected.r) !== JSON.stringify(item.r)) {
        violate(`oracle: run ${runId} ${group.comb} ${group.id} gave ${JSON.stringify(item.r)}; the journal's results in completion order give ${JSON.stringify(expected.r)}`);
      }
    }
  }

  /** Every attempt of this step failed and another is allowed: a losing step.do in backoff. */
  function retryPending(runId: string, name: string, spec: DoSpec, e: JournalEntry | undefined): boolean {
    // The journal's word first: an attempt whose outcome a crash lost (it ran, nothing was
    // recorded) is run again, so the recorded count is what the next attempt follows.
    if (e?.status === 'retrying' && !spec.terminal && e.attempts < spec.limit) return true;
    const mine = attempts.filter((a) => a.runId === runId && a.step === name);
    const last = Math.max(0, ...mine.map((a) => a.attempt));
    return last >= 1 && last <= spec.fails && !spec.terminal && last < spec.limit;
  }

  function checkEntry(runId: string, e: JournalEntry, next: JournalEntry | undefined): void {
    if (e.kind === 'do' && e.status === 'succeeded' && !childStarts.has(`${runId}|${e.name}`)) {
      const mine = attempts.filter((a) => a.runId === runId && a.step === e.name);
      if (!mine.some((a) => JSON.stringify(a.value) === JSON.stringify(e.result))) {
        violate(`one-result: ${runId}/${e.name} recorded ${JSON.stringify(e.result)}, which no attempt returned`);
      }
    }
    if (e.kind === 'sleep' && e.status === 'succeeded' && e.wakeAt !== undefined) {
      if (e.endedAt !== undefined && e.endedAt < e.wakeAt) violate(`timers: sleep ${runId}/${e.name} ended at ${e.endedAt} before its wake time ${e.wakeAt}`);
      // After a backward step the clock may read earlier than a wake time already passed:
      // the sleep is over (it ended on time), code after it sees the stepped clock.
      // Only sequential sleeps: code after a group may run before a losing sleep is due.
      if (!clockWentBack && /^(nap|alarm)(#\d+)?$/.test(e.name) && next?.kind === 'now' && typeof next.result === 'number' && next.result < e.wakeAt) {
        violate(`timers: code after sleep ${runId}/${e.name} ran at ${next.result}, before its wake time ${e.wakeAt}`);
      }
    }
    if (e.kind === 'wait' && e.status === 'timedout' && e.wakeAt !== undefined && e.endedAt !== undefined && e.endedAt < e.wakeAt) {
      violate(`timers: wait ${runId}/${e.name} timed out at ${e.endedAt} before its deadline ${e.wakeAt}`);
    }
  }

  /** A fresh engine on the final file, clock unchanged: it must find nothing to do. */
  async function checkRestartChangesNothing(): Promise<void> {
    const snapshot = () => {
      const db = new Database(dbFile, { readonly: true });
      const rows = db.prepare(`SELECT run_id, status, output, error FROM runs ORDER BY run_id`).all();
      const steps = db.prepare(`SELECT count(*) AS n FROM steps`).get();
      db.close();
      return JSON.stringify([rows, steps]);
    };
    const before = snapshot();
    await start(0);
    faults?.disarm();
    await guard('idle', t!.idle());
    await stopClean();
    const after = snapshot();
    if (after !== before) {
      const [rb, sb] = JSON.parse(before) as [unknown[], unknown];
      const [ra, sa] = JSON.parse(after) as [unknown[], unknown];
      const changed = ra.map((r, i) => [JSON.stringify(rb[i]), JSON.stringify(r)]).find(([b, a]) => a !== b);
      violate(`replay: a restart on the finished file changed runs or steps (${changed ? `${changed[0]} -> ${changed[1]}` : `steps ${JSON.stringify(sb)} -> ${JSON.stringify(sa)}, runs ${rb.length} -> ${ra.length}`})`);
    }
  }

  /** The journal by seq, with each hole a race's loser left (nothing recorded: the run
   *  finished without suspending) filled as the session held it: still open. */
  function withOpenLosers(runId: string, journal: JournalEntry[]): JournalEntry[] {
    const bySeq: JournalEntry[] = [];
    // A loser recorded open stays open too, whatever the replay's clock reads: the session
    // that finished the run found it not due (a clock stepped back may read its time since).
    for (const e of journal) {
      bySeq[e.seq] =
        e.status === 'sleeping' || e.status === 'waiting' ? { ...e, ...(e.wakeAt === undefined ? {} : { wakeAt: Number.MAX_SAFE_INTEGER }) }
        : e.status === 'retrying' ? { ...e, nextRetryAt: Number.MAX_SAFE_INTEGER }
        : e;
    }
    (positions.get(runId) ?? []).forEach((c, seq) => {
      const leaf = leaves.get(c.op);
      if (bySeq[seq] || !leaf) return;
      const open = { seq, name: c.name, attempts: 1 };
      if (leaf.k === 'do') bySeq[seq] = { ...open, kind: 'do', status: 'retrying', nextRetryAt: Number.MAX_SAFE_INTEGER };
      else if (leaf.k === 'sleep') bySeq[seq] = { ...open, kind: 'sleep', status: 'sleeping', wakeAt: Number.MAX_SAFE_INTEGER };
      else bySeq[seq] = { ...open, kind: 'wait', status: 'waiting' };
    });
    return bySeq;
  }

  /** Each finished run's workflow function, replayed against its journal, ends as stored. */
  async function checkReplay(): Promise<void> {
    const db = new Database(dbFile, { readonly: true });
    const store = new SqliteStore(db);
    replaying = true;
    try {
      const runs = db.prepare(`SELECT * FROM runs WHERE status IN ('succeeded', 'failed')`).all() as { run_id: string; workflow: string; status: string; input: string; output: string | null; error: string | null }[];
      for (const r of runs) {
        const def = defs.find((d) => d.name === r.workflow)!;
        const writes: string[] = [];
        const entries = withOpenLosers(r.run_id, store.journal(r.run_id));
        const now = lastRecordedAt(entries);
        const journal: StepLog = {
          runId: r.run_id,
          workflow: r.workflow,
          input: JSON.parse(r.input) as Json,
          entries,
          // The journal's own clock (the last time it recorded): a race's losers left open
          // were not due then and stay blocked, as they were; a cancel's grace counts from
          // its recorded delivery (a clock at 0 read ~56 years of grace left).
          now: () => now,
          random: () => 0.5,
          attempt: async (call, _attempt, run) => (writes.push(`attempt ${call.name}`), run()),
          record: async (entry) => void writes.push(`record ${entry.name}`),
          // A losing wait still open looks for a signal again (a read when none is there).
          takeSignal: async (name, entry) => (entries[entry.seq]?.status === 'waiting' || writes.push(`takeSignal ${name}`), undefined),
          emit: async (entry) => void writes.push(`emit ${entry.name}`),
          startChild: async (req) => (writes.push(`startChild ${req.parent?.step}`), { runId: '', created: false }),
          cancelRequested: () => false,
        };
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          new RunSession(journal, def.fn, def.stepDefaults).run(),
          new Promise<{ type: 'hung' }>((res) => (timer = setTimeout(() => res({ type: 'hung' }), 2000))),
        ]);
        clearTimeout(timer);
        if (writes.length) violate(`replay: run ${r.run_id} wrote during replay: ${writes.join(', ')}`);
        if (outcome.type !== r.status) {
          violate(`replay: run ${r.run_id} replays to ${outcome.type}${'error' in outcome ? ` (${JSON.stringify(outcome.error)})` : ''}, stored ${r.status}`);
        } else if (outcome.type === 'succeeded' && JSON.stringify(outcome.output) !== r.output) {
          violate(`replay: run ${r.run_id} replays to output ${JSON.stringify(outcome.output)}, stored ${r.output}`);
        } else if (outcome.type === 'failed' && JSON.stringify(outcome.error) !== r.error) {
          violate(`replay: run ${r.run_id} replays to error ${JSON.stringify(outcome.error)}, stored ${r.error}`);
        }
      }
    } finally {
      replaying = false;
      db.close();
    }
  }
}

