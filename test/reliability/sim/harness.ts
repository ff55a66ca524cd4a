// Deterministic simulation of one seed on the SQLite backend.
//
// A seed decides everything: a few random workflows built from step.do / sleep / sleepUntil /
// waitForEvent / ctx.now / ctx.random / ctx.emit, and a random sequence of actions against a
// createTestEngine on one data dir: triggers (duplicate run ids), events (duplicate event
// ids), signals, cancels, clock advances, forward and backward clock jumps, engine crashes
// (abandoned without cleanup, at a random moment or at an armed fault point), clean stops
// and restarts on the same file, sometimes with the clock moved while "down". Time is the
// manual clock and every random choice comes from the seed, so a failing seed replays.
//
// Then time is pushed far ahead (signalling whatever still waits) and the invariants are
// checked against the SQLite file (read-only) and the logs the step bodies kept:
//   terminal      every run reaches a terminal state
//   acked         every acknowledged trigger/emit/signal is in the file (nothing acked is lost)
//   one-result    a step's result, as seen by workflow code, never differs between executions,
//                 and equals the journal; the recorded result came from a real attempt
//   keys          every attempt of a step saw <runId>/<unique step name>; attempt <= limit
//   dedup         no event id and no schedule slot started two runs; a run id is created once
//   timers        no sleep, retry or wait deadline fired before its time
//   fifo          signals of one name are consumed in the order they were sent
//   replay        re-running each workflow against its final journal gives the stored outcome
//                 without running a step body or writing anything
//   after-stop    no step body starts on an engine that was stopped or crashed
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
import type { JournalEntry } from '../../../src/domain/journal.ts';
import type { Json } from '../../../src/domain/json.ts';
import type { StepLog } from '../../../src/ports/step-log.ts';
import { RunSession } from '../../../src/runtime/run-session.ts';
import { mulberry32, type Rng } from './prng.ts';

type Backoff = 'constant' | 'linear' | 'exponential';
type Op =
  | { k: 'do'; name: string; unique: string; fails: number; limit: number; backoff: Backoff; delay: number; terminal: boolean; turns: number }
  | { k: 'sleep'; name: string; ms: number }
  | { k: 'until'; name: string; offset: number }
  | { k: 'wait'; name: string; unique: string; timeout?: number }
  | { k: 'now' }
  | { k: 'random' }
  | { k: 'emit' };

interface Program {
  ops: Op[];
  failAtEnd: boolean;
}

export interface SimOptions {
  /** Arm named fault points (needs the executor's hooks). */
  faultPoints?: boolean;
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
}

/** Above pid_max: process.kill(pid, 0) fails with ESRCH, as for a dead process. */
const DEAD_PID = 2 ** 22 + 4242;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const trace: (...a: unknown[]) => void = process.env.SIM_TRACE ? (...a) => console.log('[sim]', ...a) : () => {};
const turn = () => new Promise<void>((r) => setImmediate(r));

function genProgram(rng: Rng, canEmit: boolean): Program {
  const ops: Op[] = [];
  const counts = new Map<string, number>();
  const unique = (name: string) => {
    const n = (counts.get(name) ?? 0) + 1;
    counts.set(name, n);
    return n === 1 ? name : `${name}#${n}`;
  };
  const len = rng.int(1, 7);
  for (let i = 0; i < len; i++) {
    const r = rng();
    if (r < 0.38) {
      const name = rng.pick(['fetch', 'charge', 'mail']);
      const limit = rng.int(1, 4);
      ops.push({
        k: 'do', name, unique: unique(name), limit, fails: rng.chance(0.5) ? 0 : rng.int(1, limit + 1),
        backoff: rng.pick(['constant', 'linear', 'exponential'] as const), delay: rng.pick([0, 10, 1000, 30_000, HOUR]),
        terminal: rng.chance(0.15), turns: rng.int(0, 3),
      });
    } else if (r < 0.52) ops.push({ k: 'sleep', name: 'nap', ms: rng.pick([-5, 0, 1, 500, MIN, HOUR, DAY]) });
    else if (r < 0.58) ops.push({ k: 'until', name: 'alarm', offset: rng.pick([-HOUR, 0, 5 * MIN, 2 * DAY]) });
    else if (r < 0.72) {
      const name = rng.pick(['reply', 'approve']);
      ops.push({ k: 'wait', name, unique: unique(name), timeout: rng.chance(0.5) ? undefined : rng.pick([0, 1000, HOUR, DAY]) });
    } else if (r < 0.8) ops.push({ k: 'now' });
    else if (r < 0.88) ops.push({ k: 'random' });
    else if (canEmit) ops.push({ k: 'emit' });
  }
  return { ops, failAtEnd: rng.chance(0.1) };
}

interface Attempt {
  runId: string;
  step: string;
  key: string;
  attempt: number;
  limit: number;
  value: string;
  gen: number;
}

export async function runSeed(seed: number, options: SimOptions = {}): Promise<SeedReport> {
  const rng = mulberry32(seed);
  const engineRandom = mulberry32(seed ^ 0x5bd1e995);
  const dataDir = mkdtempSync(join(tmpdir(), `tranquil-sim-${seed}-`));
  const dbFile = join(dataDir, DB_FILE);
  const violations: string[] = [];
  const violate = (what: string) => {
    if (violations.length < 20) violations.push(what);
  };
  const report: SeedReport = {
    seed, violations, runs: 0, attempts: 0, actions: 0, crashes: 0, faultCrashes: {}, restarts: 0, clockJumps: 0, signals: 0, duplicates: 0,
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
    observed.set(key, list);
  };

  const body = async (runId: string, op: Extract<Op, { k: 'do' }>, attempt: number, key: string, g: number): Promise<string> => {
    if (replaying) violate(`replay: step body '${op.unique}' of run ${runId} ran during replay of a finished journal`);
    if (deadAt.has(g) && !process.env.SIM_IGNORE_AFTER_STOP) violate(`after-stop: step body '${op.unique}' of run ${runId} started on engine #${g} after it stopped or crashed`);
    const value = `v${seed}.${++valueNo}`;
    if (attempt > 1 && ro) {
      const row = ro.prepare(`SELECT status, next_retry_at FROM steps WHERE run_id = ? AND name = ?`).get(runId, op.unique) as
        | { status: string; next_retry_at: number | null }
        | undefined;
      if (row?.status === 'retrying' && row.next_retry_at != null && row.next_retry_at > nowFn()) {
        violate(`timers: attempt ${attempt} of ${runId}/${op.unique} began at ${nowFn()} before its nextRetryAt ${row.next_retry_at}`);
      }
    }
    attempts.push({ runId, step: op.unique, key, attempt, limit: op.limit, value, gen: g });
    trace(`body ${runId}/${op.unique} attempt ${attempt} gen ${g} at ${nowFn()}`);
    for (let i = 0; i < op.turns; i++) await turn();
    if (attempt <= op.fails) throw op.terminal ? new TerminalError(`terminal at attempt ${attempt}`) : new Error(`fail at attempt ${attempt}`);
    return value;
  };

  const fnFor = (wf: string, program: Program): WorkflowFn => async ({ step, ctx }) => {
    const g = gen;
    const out: Json[] = [];
    const tag = (e: unknown) => `caught:${(e as Error).name}:${(e as Error).message}`;
    for (const op of program.ops) {
      switch (op.k) {
        case 'do': {
          const opts = { retries: { limit: op.limit, backoff: op.backoff, delay: op.delay, jitter: false } };
          try {
            const v = await step.do(op.name, opts, ({ attempt, idempotencyKey }) => body(ctx.runId, op, attempt, idempotencyKey, g));
            observe(g, ctx.runId, op.unique, JSON.stringify(v));
            out.push(v);
          } catch (e) {
            observe(g, ctx.runId, op.unique, tag(e));
            out.push(tag(e));
          }
          break;
        }
        case 'sleep':
          await step.sleep(op.name, op.ms);
          out.push(ctx.now());
          break;
        case 'until': {
          const at = ctx.now() + op.offset;
          await step.sleepUntil(op.name, at);
          out.push(ctx.now());
          break;
        }
        case 'wait':
          try {
            const p = await step.waitForEvent(op.name, op.timeout === undefined ? {} : { timeout: op.timeout });
            observe(g, ctx.runId, op.unique, JSON.stringify(p));
            out.push(p as Json);
          } catch (e) {
            observe(g, ctx.runId, op.unique, tag(e));
            out.push(tag(e));
          }
          break;
        case 'now':
          out.push(ctx.now());
          break;
        case 'random':
          out.push(ctx.random());
          break;
        case 'emit':
          await ctx.emit('sim.emitted', { from: ctx.runId });
          break;
      }
    }
    if (program.failAtEnd) throw new Error(`${wf} fails on purpose`);
    return out;
  };

  // ---- the workflows of this seed -------------------------------------------------------
  clockNow += rng.int(0, DAY);
  const programs = new Map<string, Program>();
  const defs: WorkflowDefinition[] = [];
  const add = (name: string, program: Program, triggers: Trigger[]) => {
    programs.set(name, program);
    defs.push(workflow(name, (w) => {
      for (const tr of triggers) w.trigger(tr);
      w.run(fnFor(name, program));
    }));
  };
  add('simA', genProgram(rng, true), [manual(), event('sim.ping')]);
  add('simB', genProgram(rng, false), [event('sim.ping'), event('sim.emitted')]);
  if (rng.chance(0.3)) add('tick', genProgram(rng, false), [schedule('0 */6 * * *', { catchUp: rng.pick(['latest', 'all', 'none'] as const) })]);
  const manualWorkflows = ['simA'];

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
        t = await createTestEngine({ dataDir, workflows: defs, startAt: clockNow, random: engineRandom, faults, durability: 'normal', maxConcurrentRuns: rng.pick([1, 4, 100]) });
        starting = false;
        live = true;
        ro ??= new Database(dbFile, { readonly: true });
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
  let runNo = 0;
  let signalNo = 0;

  const expectDocumented = (err: unknown, what: string, allowed: Function[]) => {
    if (crashed() || deadAt.has(gen)) return;
    if (!allowed.some((C) => err instanceof C)) violate(`api: ${what} threw ${(err as Error)?.name}: ${(err as Error)?.message}`);
  };

  try {
    await start(0);
    const nActions = rng.int(12, 40);
    for (let i = 0; i < nActions; i++) {
      if (!live) await start(rng.pick([0, 0, 0, MIN, HOUR, DAY, -HOUR, -DAY]));
      report.actions++;
      const engine = t!.engine;
      const r = rng();
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
          } catch (err) {
            expectDocumented(err, `cancel(${runId})`, [RunStateError]);
          }
        } else if (r < 0.68) {
          await t!.advance(rng.pick([0, 1, 500, 30_000, 5 * MIN, HOUR, 7 * HOUR, DAY]));
        } else if (r < 0.74) {
          // Forward jump: the clock leaps; due timers fire in order, no idle in between.
          report.clockJumps++;
          t!.clock.set(t!.now() + rng.pick([MIN, HOUR, DAY, 3 * DAY]));
        } else if (r < 0.8) {
          // Backward jump (NTP step, manual change), taken while nothing is in flight.
          report.clockJumps++;
          await t!.idle();
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
        if (rng.chance(0.6)) await t!.idle();
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
    for (let round = 0; round < 12; round++) {
      if (!live) await start(0);
      if (faults) faults.disarm();
      await t!.idle();
      if (crashed()) {
        noteCrash();
        continue;
      }
      const open = ro!.prepare(`SELECT run_id, status FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')`).all() as { run_id: string; status: string }[];
      if (open.length === 0 || (round >= 4 && stuckRows().length === 0)) break;
      // Answer every open wait, again and again (a program may wait several times in a row).
      for (let pass = 0; pass < 12; pass++) {
        const waiting = ro!.prepare(`SELECT r.run_id, s.name FROM runs r JOIN steps s ON s.run_id = r.run_id AND s.kind = 'wait' AND s.status = 'waiting' WHERE r.status = 'waiting'`).all() as { run_id: string; name: string }[];
        if (waiting.length === 0) break;
        for (const w of waiting) {
          const n = ++signalNo;
          const name = w.name.replace(/#\d+$/, '');
          await t!.engine.signal(w.run_id, name, { n, final: true });
          signalAcks.push({ runId: w.run_id, name, n });
        }
        await t!.idle();
      }
      await t!.advance('3d');
    }
    for (const r of stuckRows()) violate(`terminal: run ${r.run_id} (${r.workflow}) still ${r.status} after time was pushed ahead`);
    if (live) await stopClean();

    checkFile();
    await checkRestartChangesNothing();
    await checkReplay();
  } catch (err) {
    violate(`harness: ${(err as Error)?.stack ?? err}`);
  } finally {
    if (live && t) await t.close().catch(() => {});
    ro?.close();
    if (violations.length === 0 || options.keepFailed === false) rmSync(dataDir, { recursive: true, force: true });
    else report.dataDir = dataDir;
  }
  report.attempts = attempts.length;
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
      for (const r of runs) {
        const journal = store.journal(r.run_id);
        journal.forEach((e, i) => {
          if (e.seq !== i) violate(`journal: run ${r.run_id} has a gap at seq ${i}`);
          checkEntry(r.run_id, e, journal[i + 1]);
        });
      }
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

  function checkEntry(runId: string, e: JournalEntry, next: JournalEntry | undefined): void {
    if (e.kind === 'do' && e.status === 'succeeded') {
      const mine = attempts.filter((a) => a.runId === runId && a.step === e.name);
      if (!mine.some((a) => JSON.stringify(a.value) === JSON.stringify(e.result))) {
        violate(`one-result: ${runId}/${e.name} recorded ${JSON.stringify(e.result)}, which no attempt returned`);
      }
    }
    if (e.kind === 'sleep' && e.status === 'succeeded' && e.wakeAt !== undefined) {
      if (e.endedAt !== undefined && e.endedAt < e.wakeAt) violate(`timers: sleep ${runId}/${e.name} ended at ${e.endedAt} before its wake time ${e.wakeAt}`);
      // After a backward step the clock may read earlier than a wake time already passed:
      // the sleep is over (it ended on time), code after it sees the stepped clock.
      if (!clockWentBack && next?.kind === 'now' && typeof next.result === 'number' && next.result < e.wakeAt) {
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
    await t!.idle();
    await stopClean();
    if (snapshot() !== before) violate('replay: a restart on the finished file changed runs or steps');
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
        const journal: StepLog = {
          runId: r.run_id,
          workflow: r.workflow,
          input: JSON.parse(r.input) as Json,
          entries: store.journal(r.run_id),
          now: () => clockNow,
          random: () => 0.5,
          attempt: async (call, _attempt, run) => (writes.push(`attempt ${call.name}`), run()),
          record: async (entry) => void writes.push(`record ${entry.name}`),
          takeSignal: async (name) => (writes.push(`takeSignal ${name}`), undefined),
          emit: async (entry) => void writes.push(`emit ${entry.name}`),
          cancelRequested: () => false,
        };
        const outcome = await Promise.race([
          new RunSession(journal, def.fn, def.stepDefaults).run(),
          new Promise<{ type: 'hung' }>((res) => setTimeout(() => res({ type: 'hung' }), 2000)),
        ]);
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

