// npm run bench [-- --quick] [-- --profile] [-- --docs | --no-docs] [-- --only=raw,a,b,...]
//   [-- --backends=sqlite-full,sqlite-normal,restate]
// --only keys: raw, a (100 concurrent), b (1 at a time), g (10, 1000), c (start), d (idle),
//   e (timers), h (history), signals (300 signals to one run), fanout (1,000-way fan-out),
//   citizen (issue 17: event-loop lag pool vs inline fsync, ratio to raw, start after a crash).
//   runner (workflow files in Deno children: per-run overhead vs bare `deno run`; SQLite only).
//   cluster (issue 12: steps/s of a 3-node Restate cluster with two engine replicas behind
//   HAProxy, beside one embedded restate-server; root + network namespaces, else n/a).
//   panel (issue 15: the Runs panel's list pages over HTTP on a data dir of 1,000,000 runs,
//   100,000 in --quick, with the verdict against "under 300 ms"; bench/panel-list.ts).
//   children (issue 40: ms per awaited child run vs per step in the same run, and one run
//   awaiting 1,000 children with Promise.all (both backends), smaller in --quick: ms and peak RSS;
//   bench/lib/child-rows.ts).
//   codec (issue 37: steps/s of the 100-concurrent row with the value codec and with today's
//   JSON encoding, side by side, in alternating children; bench/lib/codec.ts).
//   otel (issue 42: steps/s of the 100-concurrent row with telemetry off, the OpenTelemetry
//   API with no SDK, and the SDK with a batching exporter, in rotating children; bench/lib/otel.ts).
//   queues (issue 39: flow control on both backends: steps/s and CPU per step through a queue
//   whose limit never binds vs no queue, handover at concurrency 1 (p50/p99), drain of 10,000
//   queued runs (500 on Restate); bench/queues.ts).
//   streams (issue 41: one run writing chunks to a stream while a follower reads it live, both
//   backends: chunks/s written and read, write -> follower latency p50/p99, a replay read from
//   offset 0 after the end; bench/streams.ts).
//   One scenario alone: `npm run bench -- --quick --only=signals --backends=restate`.
// npm run bench -- --peers [--quick] [--peer-systems=ours,dbos,cf]: the comparison with DBOS
//   (on a Postgres it starts) and Cloudflare Workflows (miniflare), alone in its own sitting
//   (issue 44; bench/lib/peers-main.ts). Never part of `npm test`.
//
// One process tree, one sitting: raw better-sqlite3 (the limit), the SQLite backend at
// durability full and normal, and the Restate backend (reported as n/a until it exists),
// on the same workloads. Every figure is the median of >= 5 repetitions after a warm-up
// (3 in --quick), min-max alongside. Prints a table, writes bench/results/<ISO time>.json,
// and (full mode, or --docs) SVG charts + a table into docs/bench/.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import type { Engine } from '../compose/index.ts';
import { runChild, spawnCompiled, spawnTs, stopChild, stopAllChildren, REPO } from './lib/children.ts';
import { machineInfo } from './lib/machine.ts';
import { rssMiB, processTree } from './lib/proc-mem.ts';
import { rawRep, sqliteVersion } from './lib/raw-sqlite.ts';
import { nowMs, sleep, summarize } from './lib/stats.ts';
import { ALL_WORKFLOWS, STEPS_PER_RUN, tenSteps } from './lib/workflows.ts';
import { summarizeProfile } from './lib/cpu-profile.ts';
import { benchFanOut, benchSignals } from './lib/run-shapes.ts';
import { benchChildren, CHILD_SIZES, CHILD_SIZES_QUICK } from './lib/child-rows.ts';
import { benchCitizen } from './lib/citizen.ts';
import { benchRunner } from './lib/runner-overhead.ts';
import { benchCluster, clusterUnavailable } from './lib/cluster.ts';
import { benchCodec, codecTable } from './lib/codec.ts';
import { benchOtel, otelTable } from './lib/otel.ts';
import { writeDocs } from './lib/report-docs.ts';
import { renderTable, type Results, type Fig, BACKENDS } from './lib/report.ts';
import { peersMain } from './lib/peers-main.ts';

// Each backend is measured in its own child process (this script, worker mode), so none
// inherits another's heap, handles or disk write-back: `{ worker: key, argv }` as argv[2].
const WORKER = process.argv[2]?.startsWith('{') ? (JSON.parse(process.argv[2]) as { worker: string; argv: string[]; floor: boolean }) : undefined;
/** Whether this process measures the node-alone floor (once per bench: the first idle pass). */
const NEED_FLOOR = WORKER ? WORKER.floor : true;
const argv = WORKER ? WORKER.argv : process.argv.slice(2);
const QUICK = argv.includes('--quick');
const PROFILE = argv.includes('--profile');
const DOCS = argv.includes('--docs') || (!QUICK && !argv.includes('--no-docs'));
const onlyArg = argv.find((x) => x.startsWith('--only='));
const ONLY = onlyArg ? new Set(onlyArg.slice(7).split(',')) : undefined;
const want = (k: string) => !ONLY || ONLY.has(k);
/** The panel row builds its data dir first (1,000,000 rows: about a minute here). */
const PANEL_TIMEOUT_MS = QUICK ? 180_000 : 900_000;
const backendsArg = argv.find((x) => x.startsWith('--backends='));
const ONLY_BACKENDS = backendsArg ? new Set(backendsArg.slice(11).split(',')) : undefined;

const CFG = QUICK
  ? {
      reps: 3, rawSeconds: 0.4, rawWarmupTx: 100,
      concRuns: { 1: 40, 10: 150, 100: 600, 1000: 1500 } as Record<number, number>,
      startReps: 3, idleReps: 2, idleMs: 700, timerReps: 2,
      timersN: { full: 5_000, normal: 5_000 }, timersWarmN: 2000,
      spread: { rate: 1000, seconds: 1 },
      // The one-run shapes add their own time: a stalled fan-out ends at its deadline, once.
      budgetMs: 115_000 + (want('signals') ? 45_000 : 0) + (want('fanout') ? 60_000 : 0) + (want('runner') ? 60_000 : 0) + (want('children') ? 300_000 : 0),
      children: CHILD_SIZES_QUICK, childrenDeadlineMs: 120_000,
      shapeReps: 1, signalsN: 300, fanOutN: 1000, fanOutDeadlineMs: 40_000, signalsDeadlineMs: 60_000,
      runnerReps: 10,
    }
  : {
      reps: 5, rawSeconds: 1, rawWarmupTx: 200,
      concRuns: { 1: 100, 10: 500, 100: 2000, 1000: 5000 } as Record<number, number>,
      startReps: 7, idleReps: 5, idleMs: 1000, timerReps: 5,
      timersN: { full: 100_000, normal: 20_000 }, timersWarmN: 10_000,
      spread: { rate: 1000, seconds: 2 },
      budgetMs: 590_000 + (want('signals') ? 120_000 : 0) + (want('fanout') ? 200_000 : 0) + (want('runner') ? 120_000 : 0) + (want('children') ? 600_000 : 0),
      children: CHILD_SIZES, childrenDeadlineMs: 180_000,
      shapeReps: 3, signalsN: 300, fanOutN: 1000, fanOutDeadlineMs: 120_000, signalsDeadlineMs: 120_000,
      runnerReps: 20,
    };
const CONCURRENCIES = [1, 10, 100, 1000];
// The Restate backend does each run over the network to restate-server, ~10-40x slower per
// step here: it runs a tenth of the runs (steps/s stay comparable: they are rates) and
// fewer timers, so the whole bench keeps to its time budget.
const RESTATE = { runScale: 0.1, timersN: QUICK ? 300 : 1000, timersWarmN: QUICK ? 100 : 300 };
const concRunsFor = (spec: Spec, conc: number) =>
  spec.backend === 'restate' ? Math.max(conc, Math.round(CFG.concRuns[conc]! * RESTATE.runScale)) : CFG.concRuns[conc]!;

const T0 = nowMs();
const elapsed = () => ((nowMs() - T0) / 1000).toFixed(1) + 's';
const log = (...a: unknown[]) => console.error(`[${elapsed()}]`, ...a);
const ROOT = mkdtempSync(join(tmpdir(), 'tranquil-bench-'));
const freshDir = (tag: string) => mkdtempSync(join(ROOT, `${tag}-`));
const rmDir = (d: string) => rmSync(d, { recursive: true, force: true });

function fig(samples: number[], unit: string, extra: Record<string, unknown> = {}): Fig {
  const s = summarize(samples);
  return { median: s.median, min: s.min, max: s.max, n: s.n, unit, samples: samples.map((x) => Number(x.toFixed(3))), ...extra };
}
const na = (why: string): Fig => ({ na: why });

async function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

// ---- raw better-sqlite3 --------------------------------------------------------------

function benchRaw(res: Results): void {
  const dir = freshDir('raw');
  try {
    for (const sync of ['FULL', 'NORMAL'] as const) {
      for (const batch of [1, 100]) {
        rawRep(dir, sync, batch, CFG.rawSeconds / 2, CFG.rawWarmupTx); // warm-up
        const reps = Array.from({ length: CFG.reps }, () => rawRep(dir, sync, batch, CFG.rawSeconds, CFG.rawWarmupTx));
        const key = `${sync}_batch${batch}`;
        res.raw[key] = { txPerS: fig(reps.map((r) => r.txPerS), 'tx/s'), pairsPerS: fig(reps.map((r) => r.pairsPerS), 'pairs/s') };
        log(`raw ${key}: ${Math.round(res.raw[key]!.pairsPerS.median!)} pairs/s`);
      }
    }
  } finally {
    rmDir(dir);
  }
}

// ---- in-process engine workloads ------------------------------------------------------

type Spec = (typeof BACKENDS)[number];

async function openEngine(spec: Spec, dataDir: string): Promise<Engine> {
  const engine = await createEngine({
    backend: spec.backend, dataDir, workflows: ALL_WORKFLOWS, durability: spec.durability, maxConcurrentRuns: 1000,
  });
  await engine.start();
  return engine;
}

/** Closed loop: `conc` clients each trigger a 10-step run and wait for its result, until `runs` ran. */
async function closedLoop(engine: Engine, conc: number, runs: number): Promise<{ seconds: number; latMs: number[] }> {
  let next = 0;
  const lat: number[] = [];
  const t0 = nowMs();
  const client = async () => {
    while (next < runs) {
      next++;
      const a = nowMs();
      const { runId } = await engine.trigger(tenSteps.name, {});
      const v = await engine.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`run ${runId} ended ${v.status}: ${v.error?.message}`);
      lat.push(nowMs() - a);
    }
  };
  await Promise.all(Array.from({ length: Math.min(conc, runs) }, client));
  return { seconds: (nowMs() - t0) / 1000, latMs: lat };
}

function countJournaledSteps(dataDir: string): number | undefined {
  const file = join(dataDir, 'tranquil.db');
  if (!existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM steps WHERE kind = 'do' AND status = 'succeeded'`).get() as { n: number }).n;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

function commitStats(engine: Engine): { transactions: number; writes: number } | undefined {
  const s = (engine.executor as unknown as { commitStats?: { transactions: number; writes: number } }).commitStats;
  return s ? { ...s } : undefined;
}

async function benchConcurrency(spec: Spec, conc: number, out: Record<string, unknown>): Promise<void> {
  const dir = freshDir(`${spec.key}-c${conc}`);
  const runs = concRunsFor(spec, conc);
  let engine: Engine | undefined;
  try {
    engine = await openEngine(spec, dir);
    const e = engine;
    await withDeadline(closedLoop(e, conc, Math.max(QUICK ? conc / 2 : conc * 2, Math.ceil(runs / 3))), 120_000, 'warm-up'); // warm-up
    const before = commitStats(e);
    // The Restate backend journals in restate-server, not in the local file: nothing to count.
    const stepsBefore = spec.backend === 'restate' ? undefined : countJournaledSteps(dir);
    const reps: { stepsPerS: number; latMedian: number; latP99: number }[] = [];
    for (let r = 0; r < CFG.reps; r++) {
      const { seconds, latMs } = await withDeadline(closedLoop(e, conc, runs), 180_000, `concurrency ${conc}`);
      const s = summarize(latMs);
      latMs.sort((a, b) => a - b);
      reps.push({ stepsPerS: (runs * STEPS_PER_RUN) / seconds, latMedian: s.median, latP99: latMs[Math.ceil(latMs.length * 0.99) - 1]! });
    }
    const after = commitStats(e);
    const stepsAfter = spec.backend === 'restate' ? undefined : countJournaledSteps(dir);
    const expected = CFG.reps * runs * STEPS_PER_RUN;
    out[`c${conc}`] = {
      stepsPerS: fig(reps.map((r) => r.stepsPerS), 'steps/s'),
      runLatencyMedianMs: fig(reps.map((r) => r.latMedian), 'ms'),
      runLatencyP99Ms: fig(reps.map((r) => r.latP99), 'ms'),
      runsPerRep: runs,
      journaledStepsVerified: stepsBefore === undefined || stepsAfter === undefined ? 'n/a' : stepsAfter - stepsBefore === expected,
      writesPerCommit: before && after ? (after.writes - before.writes) / Math.max(1, after.transactions - before.transactions) : undefined,
      commitsPerRun: before && after ? (after.transactions - before.transactions) / (CFG.reps * runs) : undefined,
    };
    const f = (out[`c${conc}`] as { stepsPerS: Fig }).stepsPerS;
    log(`${spec.key} concurrency ${conc}: ${Math.round(f.median!)} steps/s`);
  } finally {
    await engine?.stop().catch(() => {});
    rmDir(dir);
  }
}

async function benchStart(spec: Spec): Promise<Fig> {
  const one = async () => {
    const dir = freshDir(`${spec.key}-start`);
    let engine: Engine | undefined;
    try {
      const t0 = nowMs();
      engine = await createEngine({ backend: spec.backend, dataDir: dir, workflows: ALL_WORKFLOWS, durability: spec.durability });
      await engine.start();
      const { runId } = await engine.trigger(tenSteps.name, {});
      const v = await engine.result(runId, { timeout: '60s' });
      const ms = nowMs() - t0;
      if (v.status !== 'succeeded') throw new Error(`first run ${v.status}`);
      return ms;
    } finally {
      await engine?.stop().catch(() => {});
      rmDir(dir);
    }
  };
  await withDeadline(one(), 60_000, 'start warm-up');
  const xs: number[] = [];
  for (let r = 0; r < CFG.startReps; r++) xs.push(await withDeadline(one(), 60_000, 'start'));
  return fig(xs, 'ms');
}

// ---- child-process workloads ----------------------------------------------------------

/** RSS of a child's tree, leaving out tsx's esbuild service (a dev-loader artefact). */
function engineTreeRss(pid: number): number {
  return processTree(pid)
    .filter((p) => {
      try {
        return p === pid || !readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('esbuild');
      } catch {
        return false;
      }
    })
    .reduce((a, p) => a + (rssMiB(p) || 0), 0);
}

/** compiled: the production build (dist/ via bench/.build/child-idle.js) under plain node; else the sources under tsx. */
async function idleChild(args: Record<string, unknown>, compiled: boolean): Promise<{ rss: number; treeRss: number; out: Record<string, unknown> }> {
  const s = (compiled ? spawnCompiled : spawnTs)('child-idle.ts', { ...args, idleMs: CFG.idleMs });
  try {
    const out = await s.nextJson(60_000);
    if (out.error) throw new Error(String(out.error));
    const pid = s.child.pid!;
    return { rss: rssMiB(pid), treeRss: engineTreeRss(pid), out };
  } finally {
    await stopChild(s);
  }
}

// Idle RSS is the production build's (dist/, what a deployment runs: plain node, no loader);
// the same child under the tsx dev loader is reported alongside (*Tsx*), repetitions interleaved.
async function benchIdle(spec: Spec, res: Results): Promise<Record<string, Fig>> {
  const run = (compiled: boolean) => {
    const dir = freshDir(`${spec.key}-idle`);
    return idleChild({ mode: 'engine', backend: spec.backend, durability: spec.durability, dataDir: dir }, compiled).finally(() => rmDir(dir));
  };
  await run(true); // warm-ups (page cache; tsx transform cache)
  if (!QUICK) await run(false);
  const reps = [];
  const tsx = [];
  // --quick keeps to its time budget with one tsx repetition (the full run has CFG.idleReps).
  // The Restate backend's idle child also boots a restate-server: one repetition in --quick.
  const idleReps = QUICK && spec.backend === 'restate' ? 1 : CFG.idleReps;
  for (let r = 0; r < idleReps; r++) {
    reps.push(await run(true));
    if (!QUICK || r === 0) tsx.push(await run(false));
  }
  if (!res.floor && NEED_FLOOR) {
    const bare = [];
    const bareTsx = [];
    for (let r = 0; r < (QUICK ? 1 : CFG.idleReps); r++) {
      bare.push(await idleChild({ mode: 'bare' }, true));
      bareTsx.push(await idleChild({ mode: 'bare' }, false));
    }
    const floor = { nodeIdleRssMiB: fig(bare.map((b) => b.rss), 'MiB'), nodeTsxIdleRssMiB: fig(bareTsx.map((b) => b.rss), 'MiB') };
    res.floor = floor;
  }
  return {
    idleRssMiB: fig(reps.map((r) => r.treeRss), 'MiB'),
    idleRssEngineProcessMiB: fig(reps.map((r) => r.rss), 'MiB'),
    idleRssTsxMiB: fig(tsx.map((r) => r.treeRss), 'MiB'),
    // The cold-start figures keep their meaning (node + tsx, as the table labels them); compiled alongside.
    coldProcessToFirstRunMs: fig(tsx.map((r) => Number(r.out.processStartToFirstRunMs)), 'ms'),
    coldStartToFirstRunMs: fig(tsx.map((r) => Number(r.out.startToFirstRunMs)), 'ms'),
    coldProcessToFirstRunCompiledMs: fig(reps.map((r) => Number(r.out.processStartToFirstRunMs)), 'ms'),
    coldStartToFirstRunCompiledMs: fig(reps.map((r) => Number(r.out.startToFirstRunMs)), 'ms'),
  };
}

interface TimerOut {
  scheduleMs: number; scheduleRunsPerS: number; scheduledBeforeInstant: boolean; wokeBeforeInstant: number;
  completeAfterInstantMs: number; completeAfterLastDueMs: number; latenessP50Ms: number; latenessP99Ms: number; latenessMaxMs: number;
  rssSleepingMiB: number; peakRssMiB: number; succeeded: number; error?: string; snapshotMs?: number; dbBytes?: number;
  catchupMs?: number; startMs?: number;
}

async function timerChild(spec: Spec, args: Record<string, unknown>, timeoutMs: number, nodeFlags: string[] = []): Promise<TimerOut> {
  const out = (await runChild('child-timers.ts', { backend: spec.backend, durability: spec.durability, deadlineMs: timeoutMs - 5000, ...args }, timeoutMs, nodeFlags)) as unknown as TimerOut;
  if (out.error) throw new Error(out.error);
  return out;
}

async function benchTimers(spec: Spec, n: number): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = { n };
  // --quick keeps to its budget: a Restate timer child also boots a restate-server.
  const timerReps = QUICK && spec.backend === 'restate' ? 1 : CFG.timerReps;
  // One warm-up child for the timer group (tsx transform cache, page cache; every child is a
  // fresh process). At a smaller N; it also measures the scheduling rate that sets the lead time.
  const warmDir = freshDir(`${spec.key}-tw`);
  let rate: number;
  try {
    const warmN = spec.backend === 'restate' ? RESTATE.timersWarmN : CFG.timersWarmN;
    const w = await timerChild(spec, { mode: 'same-instant', dataDir: warmDir, n: warmN, leadMs: 1500 + warmN / 2 }, 120_000);
    rate = w.scheduleRunsPerS;
  } finally {
    rmDir(warmDir);
  }
  // The instant must come after every run is asleep: lead = expected scheduling time + slack.
  let schedMs: number | undefined; // observed at full N
  const leadFor = (count: number, extra = 0) =>
    Math.round(extra + (schedMs !== undefined && count === n ? 800 + schedMs * 1.15 : 1500 + (count / rate) * 1000 * 1.4));
  const snapshot = join(ROOT, `${spec.key}-overdue.db`);
  const same: TimerOut[] = [];
  const invalid: string[] = [];
  for (let r = 0; r < timerReps; r++) {
    const dir = freshDir(`${spec.key}-ts`);
    try {
      const snap = r === 0 ? snapshot : undefined;
      const lead = leadFor(n, snap ? 500 + n / 20 : 0);
      // Rep 0 also copies the file for the restart workload and probes the retained heap (gc).
      const o = await timerChild(spec, { mode: 'same-instant', dataDir: dir, n, leadMs: lead, snapshotTo: snap }, lead + 240_000, snap ? ['--expose-gc'] : []);
      rate = Math.min(rate, o.scheduleRunsPerS);
      schedMs = Math.max(schedMs ?? 0, o.scheduleMs);
      if (snap) {
        result.retainedHeapBytesPerSleepingRun = (o as unknown as Record<string, unknown>).retainedHeapBytesPerSleepingRun;
        result.retainedHeapBytesPerFinishedRun = (o as unknown as Record<string, unknown>).retainedHeapBytesPerFinishedRun;
      }
      if (!o.scheduledBeforeInstant || o.succeeded !== n) invalid.push(`rep ${r}: scheduled ${o.scheduleMs} ms vs lead ${lead} ms, succeeded ${o.succeeded}/${n}`);
      else same.push(o);
      if (o.dbBytes) result.dbBytesPerRun = o.dbBytes / n;
      log(`${spec.key} timers same-instant n=${n}: sched ${o.scheduleMs} ms, complete +${o.completeAfterInstantMs} ms, p99 ${o.latenessP99Ms} ms, rss ${o.rssSleepingMiB.toFixed(0)} MiB`);
    } finally {
      rmDir(dir);
    }
  }
  if (invalid.length) result.invalidReps = invalid;
  if (same.length) {
    result.sameInstant = {
      completeAfterInstantMs: fig(same.map((o) => o.completeAfterInstantMs), 'ms'),
      latenessP50Ms: fig(same.map((o) => o.latenessP50Ms), 'ms'),
      latenessP99Ms: fig(same.map((o) => o.latenessP99Ms), 'ms'),
      rssSleepingMiB: fig(same.map((o) => o.rssSleepingMiB), 'MiB'),
      peakRssMiB: fig(same.map((o) => o.peakRssMiB), 'MiB'),
      scheduleRunsPerS: fig(same.map((o) => o.scheduleRunsPerS), 'runs/s'),
    };
  }
  // Restart with N overdue timers: copies of the snapshot taken while N runs slept.
  if (existsSync(snapshot)) {
    const cat: TimerOut[] = [];
    for (let r = 1; r <= timerReps; r++) {
      const dir = freshDir(`${spec.key}-tr`);
      try {
        copyFileSync(snapshot, join(dir, 'tranquil.db'));
        const o = await timerChild(spec, { mode: 'restart', dataDir: dir, n }, 240_000);
        if (o.succeeded !== n) throw new Error(`restart: ${o.succeeded}/${n} runs succeeded`);
        cat.push(o);
        log(`${spec.key} restart with ${n} overdue: catch-up ${o.catchupMs} ms`);
      } finally {
        rmDir(dir);
      }
    }
    result.overdueRestart = {
      catchupMs: fig(cat.map((o) => o.catchupMs!), 'ms'),
      startMs: fig(cat.map((o) => o.startMs!), 'ms'),
      peakRssMiB: fig(cat.map((o) => o.peakRssMiB), 'MiB'),
    };
    rmSync(snapshot, { force: true });
  } else {
    result.overdueRestart = na('no snapshot of sleeping runs was taken');
  }
  // Timers spread at `rate` due per second: wake lateness under a steady load.
  const m = Math.round(CFG.spread.rate * CFG.spread.seconds);
  const spread: TimerOut[] = [];
  for (let r = 1; r <= timerReps; r++) {
    const dir = freshDir(`${spec.key}-tsp`);
    try {
      const lead = leadFor(m);
      const o = await timerChild(spec, { mode: 'spread', dataDir: dir, n: m, rate: CFG.spread.rate, leadMs: lead }, lead + 120_000);
      if (o.scheduledBeforeInstant && o.succeeded === m) spread.push(o);
    } finally {
      rmDir(dir);
    }
  }
  result.spread = {
    runs: m, duePerS: CFG.spread.rate,
    latenessP50Ms: fig(spread.map((o) => o.latenessP50Ms), 'ms'),
    latenessP99Ms: fig(spread.map((o) => o.latenessP99Ms), 'ms'),
    latenessMaxMs: fig(spread.map((o) => o.latenessMaxMs), 'ms'),
  };
  log(`${spec.key} timers spread ${m} @ ${CFG.spread.rate}/s: p99 ${(result.spread as { latenessP99Ms: Fig }).latenessP99Ms.median} ms`);
  return result;
}

// ---- one backend ----------------------------------------------------------------------

async function probe(spec: Spec): Promise<string | undefined> {
  const dir = freshDir(`${spec.key}-probe`);
  let engine: Engine | undefined;
  try {
    engine = await withDeadline(openEngine(spec, dir), 60_000, 'start');
    return undefined;
  } catch (err) {
    return (err as Error)?.message ?? String(err);
  } finally {
    await engine?.stop().catch(() => {});
    rmDir(dir);
  }
}

async function benchBackend(spec: Spec, res: Results): Promise<void> {
  const b: Record<string, unknown> = {};
  res.backends[spec.key] = b;
  const why = await probe(spec);
  if (why !== undefined) {
    b.na = `backend not available: ${why.split('\n')[0]}`;
    log(`${spec.key}: n/a (${b.na})`);
    return;
  }
  const guard = async (key: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      b[key] = na(`failed: ${(err as Error)?.message ?? err}`);
      log(`${spec.key} ${key} failed: ${(err as Error)?.stack ?? err}`);
    }
  };
  const conc: Record<string, unknown> = {};
  b.concurrency = conc;
  for (const c of CONCURRENCIES) {
    if (!want(c === 1 ? 'b' : c === 100 ? 'a' : 'g')) continue;
    await guard(`concurrency-${c}`, () => benchConcurrency(spec, c, conc));
  }
  if (want('c')) await guard('startToFirstRunMs', async () => { b.startToFirstRunMs = await benchStart(spec); });
  if (want('d')) await guard('idle', async () => { b.idle = await benchIdle(spec, res); });
  if (want('e')) await guard('timers', async () => { b.timers = await benchTimers(spec, spec.backend === 'restate' ? RESTATE.timersN : CFG.timersN[spec.durability]); });
  // Inside one run: signal cost (issue 19) and the 1,000-way fan-out (issue 18).
  const shape = (mode: string) => ({ reps: CFG.shapeReps, dataDir: () => freshDir(`${spec.key}-${mode}`), log });
  if (want('signals')) await guard('signals', async () => { b.signals = await benchSignals(spec, { ...shape('sig'), n: CFG.signalsN, deadlineMs: CFG.signalsDeadlineMs }); });
  if (want('fanout')) await guard('fanout', async () => { b.fanout = await benchFanOut(spec, { ...shape('fan'), n: CFG.fanOutN, deadlineMs: CFG.fanOutDeadlineMs }); });
  // Child runs (issue 40): an awaited child against a step, and a fan-out of children.
  if (want('children')) await guard('children', async () => { b.children = await benchChildren(spec, { ...shape('kids'), sizes: CFG.children, deadlineMs: CFG.childrenDeadlineMs }); });
  // Workflow files run in Deno children on the SQLite backend only (docs/runner.md).
  if (want('runner')) {
    if (spec.backend === 'restate') b.runner = na('workflow files do not run on Restate yet');
    else await guard('runner', async () => { b.runner = await benchRunner(spec, { reps: CFG.runnerReps, warmup: 3, tenRuns: CFG.runnerReps, dataDir: () => freshDir(`${spec.key}-runner`), log }); });
  }
}

// ---- CPU profile of the 100-concurrent workload -----------------------------------------

async function profile(res: Results): Promise<void> {
  const dir = freshDir('profile');
  try {
    const out = await runChild('profile-100.ts', { dataDir: join(dir, 'data'), runs: QUICK ? 3000 : 12000, durability: 'full' }, 180_000, [
      '--cpu-prof', `--cpu-prof-dir=${join(dir, 'prof')}`,
    ]);
    await sleep(300);
    const files = existsSync(join(dir, 'prof')) ? readdirSync(join(dir, 'prof')).filter((f) => f.endsWith('.cpuprofile')) : [];
    if (!files.length) throw new Error('no .cpuprofile written');
    res.profile = { workload: out, ...summarizeProfile(join(dir, 'prof', files[0]!), REPO) };
  } finally {
    rmDir(dir);
  }
}

function gitInfo(): Record<string, unknown> {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'compose', 'sdk'], { cwd: REPO, encoding: 'utf8' }).trim().length > 0;
    return { commit: head, engineSourcesDirty: dirty };
  } catch {
    return {};
  }
}

// ---- main -----------------------------------------------------------------------------

/** Worker mode: one backend's workloads, printed as one JSON line for the parent. */
async function worker(key: string): Promise<void> {
  const spec = BACKENDS.find((b) => b.key === key);
  if (!spec) throw new Error(`unknown backend ${key}`);
  const res: Results = { mode: QUICK ? 'quick' : 'full', startedAt: new Date().toISOString(), machine: {}, config: CFG, raw: {}, backends: {} };
  await benchBackend(spec, res);
  process.stdout.write(JSON.stringify({ backend: res.backends[spec.key], floor: res.floor }) + '\n');
}

async function main(): Promise<void> {
  if (WORKER) return worker(WORKER.worker);
  if (argv.includes('--peers')) {
    process.exitCode = await peersMain({ argv, quick: QUICK, docs: DOCS, root: ROOT, log: (s) => log(s), machine: { ...machineInfo(), ...gitInfo() } });
    return;
  }
  const started = new Date();
  const res: Results = {
    mode: QUICK ? 'quick' : 'full',
    startedAt: started.toISOString(),
    machine: { ...machineInfo(), sqlite: sqliteVersion(), ...gitInfo() },
    config: CFG,
    raw: {},
    backends: {},
  };
  const watchdog = setTimeout(() => {
    log(`watchdog: over the ${CFG.budgetMs + 60_000} ms bound, stopping children`);
    void stopAllChildren().finally(() => process.exit(3));
  }, CFG.budgetMs + 60_000 + (PROFILE ? 120_000 : 0) + (want('citizen') ? (QUICK ? 240_000 : 900_000) : 0) + (want('cluster') ? (QUICK ? 240_000 : 600_000) : 0) + (want('panel') ? PANEL_TIMEOUT_MS : 0) + (want('otel') ? (QUICK ? 180_000 : 900_000) : 0)
    // The codec row's children (bench/lib/codec.ts) run after the backends, outside budgetMs.
    + (want('codec') ? (QUICK ? 300_000 : 900_000) : 0));
  watchdog.unref();
  log(`mode ${res.mode}; machine ${JSON.stringify(res.machine)}; temp ${ROOT}`);
  if (want('raw')) benchRaw(res);
  for (const spec of BACKENDS) {
    if (ONLY_BACKENDS && !ONLY_BACKENDS.has(spec.key)) continue;
    try {
      const out = await runChild('run.ts', { worker: spec.key, argv, floor: !res.floor }, CFG.budgetMs, [], true);
      res.backends[spec.key] = out.backend as Record<string, unknown>;
      if (out.floor && !res.floor) res.floor = out.floor as Results['floor'];
    } catch (err) {
      log(`${spec.key}: worker failed: ${(err as Error).message}`);
    }
  }
  if (PROFILE) await profile(res).catch((err) => { res.profile = { error: String(err?.message ?? err) }; });
  // How cost grows with history (10^3..10^6 runs already in the file): bench/history.ts.
  let historyTable = '';
  if (want('h')) {
    try {
      historyTable = execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'bench', 'history.ts'), ...(QUICK ? ['--quick'] : [])], { encoding: 'utf8', timeout: 300_000, stdio: ['ignore', 'pipe', 'inherit'] });
      (res as unknown as Record<string, unknown>).history = historyTable;
    } catch (err) {
      log(`history failed: ${(err as Error).message}`);
    }
  }
  // Issue 39: flow control (bench/queues.ts); issue 41: live output (bench/streams.ts).
  const queuesText = want('queues') ? perBackendScript('queues', 1_800_000) : '';
  if (queuesText) (res as unknown as Record<string, unknown>).queues = queuesText;
  const streamsText = want('streams') ? perBackendScript('streams', 1_200_000) : '';
  if (streamsText) (res as unknown as Record<string, unknown>).streams = streamsText;
  // Issue 12: a 3-node Restate cluster with two engine replicas beside one embedded server.
  let clusterTable = '';
  if (want('cluster')) {
    const why = clusterUnavailable();
    try {
      if (why) throw new Error(why);
      const c = await benchCluster({ quick: QUICK, log });
      (res as unknown as Record<string, unknown>).cluster = c;
      clusterTable = [
        `| issue 12 row (10-step runs, ${c.concurrency} clients, ${c.runsPerRep} runs a repetition, interleaved) | steps/s median (min-max) |`,
        '|---|---|',
        `| Restate cluster: 3 nodes (replication 2), 2 engine replicas behind HAProxy, own network namespaces | ${c.clusterStepsPerS.median.toFixed(0)} (${c.clusterStepsPerS.min.toFixed(0)}-${c.clusterStepsPerS.max.toFixed(0)}) |`,
        `| one engine on its embedded restate-server, same sitting | ${c.embeddedStepsPerS.median.toFixed(0)} (${c.embeddedStepsPerS.min.toFixed(0)}-${c.embeddedStepsPerS.max.toFixed(0)}) |`,
        `| cluster / embedded, median of per-pair ratios | ${c.ratio.toFixed(2)}x |`,
      ].join('\n');
    } catch (err) {
      (res as unknown as Record<string, unknown>).cluster = { na: (err as Error).message };
      clusterTable = `| issue 12 row | n/a: ${(err as Error).message} |\n|---|---|`;
      log(`cluster: ${(err as Error).message}`);
    }
  }
  let codecRows = '';
  if (want('codec')) {
    try {
      const c = await benchCodec({ quick: QUICK, log });
      (res as unknown as Record<string, unknown>).codec = c;
      codecRows = codecTable(c);
    } catch (err) {
      codecRows = `| issue 37 row | n/a: ${(err as Error).message} |\n|---|---|`;
      log(`codec failed: ${(err as Error).message}`);
    }
  }
  let otelRows = '';
  if (want('otel')) {
    try {
      const c = await benchOtel({ quick: QUICK, log });
      (res as unknown as Record<string, unknown>).otel = c;
      otelRows = otelTable(c);
    } catch (err) {
      otelRows = `| issue 42 row | n/a: ${(err as Error).message} |\n|---|---|`;
      log(`otel failed: ${(err as Error).message}`);
    }
  }
  let citizenTable = '';
  if (want('citizen')) {
    try {
      const c = await benchCitizen(QUICK, log);
      (res as unknown as Record<string, unknown>).citizen = c;
      citizenTable = [
        '| issue 17 row | fsync on the thread pool | fsync inline (before) | pool, each client holding its last view |',
        '|---|---|---|---|',
        `| host event-loop lag p50 / p99 / max, 100 x 10 steps, full | ${c.lag.pool.p50.toFixed(1)} / ${c.lag.pool.p99.toFixed(1)} / ${c.lag.pool.max.toFixed(1)} ms | ${c.lag.inline.p50.toFixed(1)} / ${c.lag.inline.p99.toFixed(1)} / ${c.lag.inline.max.toFixed(1)} ms | ${c.lag.held.p50.toFixed(1)} / ${c.lag.held.p99.toFixed(1)} / ${c.lag.held.max.toFixed(1)} ms |`,
        `| journaled steps/s; share of raw batched better-sqlite3 measured right after each child, median of those pairs (minimal layout: ${Math.round(c.rawPairsPerS)} pairs/s, median) | ${Math.round(c.lag.pool.stepsPerS)} (${(c.ratioPool * 100).toFixed(1)}% of raw) | ${Math.round(c.lag.inline.stepsPerS)} (${(c.ratioInline * 100).toFixed(1)}% of raw) | ${Math.round(c.lag.held.stepsPerS)} (${(c.ratioHeld * 100).toFixed(1)}% of raw) |`,
        `| the same steps/s against raw on the engine's own schema and statements (${Math.round(c.layout.rawStepsPerS)} steps/s; not the verdict) | ${(c.layout.ratioPool * 100).toFixed(0)}% | ${(c.layout.ratioInline * 100).toFixed(0)}% | ${(c.layout.ratioHeld * 100).toFixed(0)}% |`,
        `| main thread's CPU per step; scavenges during the run (median pause) | ${c.lag.pool.mainCpuUsPerStep.toFixed(1)} us; ${c.lag.pool.scavenges} (${c.lag.pool.scavengeMedianMs.toFixed(1)} ms) | ${c.lag.inline.mainCpuUsPerStep.toFixed(1)} us; ${c.lag.inline.scavenges} (${c.lag.inline.scavengeMedianMs.toFixed(1)} ms) | ${c.lag.held.mainCpuUsPerStep.toFixed(1)} us; ${c.lag.held.scavenges} (${c.lag.held.scavengeMedianMs.toFixed(1)} ms) |`,
        ...Object.entries(c.startAfterCrashMs).map(([n, ms]) => `| start after a crash, ${Number(n).toLocaleString('en')} runs in the file | ${ms.toFixed(0)} ms | | |`),
        ...(['settled', 'oneSecond'] as const).flatMap((at) => {
          const f = c.idleRssMiB[at];
          const when = at === 'settled' ? 'settled (20 s idle)' : '1 s after the first run';
          return [
            `| idle RSS, built (dist/, plain node), minus node alone, ${when} | ${f.over.toFixed(1)} MiB (${f.engine.toFixed(1)} - ${f.node.toFixed(1)}) | | |`,
            `| idle RSS, built, minus node alone after one hot loop (V8's optimizing compiler mapped, as in a host that has run hot code; not the verdict), ${when} | ${f.overWarm.toFixed(1)} MiB (${f.engine.toFixed(1)} - ${f.warm.toFixed(1)}) | | |`,
            `| idle RSS, built, minus node + better-sqlite3 with a WAL file open (the engine's own share), ${when} | ${f.overDriver.toFixed(1)} MiB (${f.engine.toFixed(1)} - ${f.driver.toFixed(1)}) | | |`,
          ];
        }),
        ...Object.entries(c.verdicts).map(([k, v]) => `| verdict ${k} | ${v} | | |`),
      ].join('\n');
    } catch (err) {
      log(`citizen failed: ${(err as Error).message}`);
    }
  }
  // The Runs panel's list on a million runs (issue 15), in a child of its own (its data dir
  // is written first; the HTTP client and the panel share that child, as in a browser tab
  // next to a serve on one machine).
  let panelTable = '';
  if (want('panel')) {
    try {
      const out = execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'bench', 'panel-list.ts'), '--json', ...(QUICK ? ['--quick'] : [])],
        { encoding: 'utf8', timeout: PANEL_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'inherit'] });
      const panel = JSON.parse(out.trim().split('\n').pop()!) as { table: string; verdict: string };
      (res as unknown as Record<string, unknown>).panel = panel;
      panelTable = panel.table;
      log(`panel: ${panel.verdict}`);
    } catch (err) {
      log(`panel failed: ${(err as Error).message}`);
    }
  }
  res.durationS = Number(((nowMs() - T0) / 1000).toFixed(1));
  const table = renderTable(res) + (clusterTable ? `\n\n${clusterTable}` : '') + (citizenTable ? `\n\n${citizenTable}` : '') + (panelTable ? `\n\n${panelTable}` : '') + (codecRows ? `\n\n${codecRows}` : '') + (otelRows ? `\n\n${otelRows}` : '');
  console.log(table);
  if (historyTable) console.log('\nHow cost grows with history (runs already asleep in the file):\n' + historyTable);
  if (queuesText) console.log('\nFlow control (issue 39; bench/queues.ts):\n' + queuesText);
  if (streamsText) console.log('\nLive output (issue 41; bench/streams.ts):\n' + streamsText);
  if (res.profile && !('error' in res.profile)) console.log('\n' + (res.profile as { text: string }).text);
  mkdirSync(join(REPO, 'bench', 'results'), { recursive: true });
  const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const file = join(REPO, 'bench', 'results', `${stamp}-${res.mode}.json`);
  writeFileSync(file, JSON.stringify({ ...res, table }, null, 1) + '\n');
  log(`wrote ${file}`);
  if (DOCS) log(`wrote ${writeDocs(res, table, join(REPO, 'docs', 'bench'), `bench/results/${stamp}-${res.mode}.json`).join(', ')}`);
  clearTimeout(watchdog);
}

/** bench/<name>.ts once per backend, each in its own process (SQLite at its default
 *  durability, Restate over its embedded restate-server): its printed lines, a failed
 *  backend's as one line naming the failure. */
function perBackendScript(name: string, timeoutMs: number): string {
  let text = '';
  for (const backend of ['sqlite', 'restate'] as const) {
    if (ONLY_BACKENDS && ![...ONLY_BACKENDS].some((k) => k.startsWith(backend))) continue;
    try {
      text += execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'bench', `${name}.ts`), `--backend=${backend}`, ...(QUICK ? ['--quick'] : [])], { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'inherit'] });
    } catch (err) {
      log(`${name} (${backend}) failed: ${(err as Error).message}`);
      text += `backend   ${backend}: failed (${(err as Error).message.split('\n')[0]})\n`;
    }
  }
  return text;
}

const cleanup = () => {
  rmDir(ROOT);
};
process.once('SIGINT', () => void stopAllChildren().finally(() => { cleanup(); process.exit(130); }));
process.once('SIGTERM', () => void stopAllChildren().finally(() => { cleanup(); process.exit(143); }));
main()
  .then(async () => {
    await stopAllChildren();
    cleanup();
    process.exit(process.exitCode ?? 0);
  })
  .catch(async (err) => {
    console.error(err);
    await stopAllChildren();
    cleanup();
    process.exit(1);
  });
