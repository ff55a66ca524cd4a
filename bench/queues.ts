// npm run bench:queues [-- --quick] [-- --backend=sqlite|restate] [-- --overhead] [-- --reps=N]:
// flow control (issue 39).
//  - overhead: steps/s of concurrent runs x 10 steps, each step through a queue whose limit
//    never binds, against the same steps with no queue, with sync and with async bodies, on
//    one warm engine: repetitions in pairs, the order alternating (AB BA AB ...) so a noisy
//    machine and the file's growth hit both sides alike; the figure is the median of the
//    per-pair ratios with their spread, and the process CPU per step (the steadier figure);
//  - handover: with concurrency 1, the time from one body's end to the next body's start
//    (the grant's durable write and the wake-up), p50 / p99;
//  - drain: runs/s of N runs queued at once on a queue of concurrency 10 (10,000; 2,000 in
//    --quick), the step queued, and the run itself queued (run-level, `runs: { queue }`).
// --overhead: the overhead rows alone; --reps=N: N pairs of repetitions per row; --runs=N: the
// runs a repetition (SQLite: 500, 200 in --quick; Restate: 20).
// On Restate every figure is over restate-server (a queue is a virtual object there, a grant a
// few round trips: docs/flow-control.md), so its sizes are smaller and each names its n.
// Also run by `npm run bench` (--only=queues) once per backend, printed under its table.
import * as z from 'zod';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { manual, queue, workflow } from '../sdk/index.ts';

const QUICK = process.argv.includes('--quick');
const BACKEND = (process.argv.find((a) => a.startsWith('--backend='))?.slice(10) ?? 'sqlite') as 'sqlite' | 'restate';
if (BACKEND !== 'sqlite' && BACKEND !== 'restate') throw new Error(`--backend: '${BACKEND}' is not sqlite or restate`);
const ON_RESTATE = BACKEND === 'restate';
// Restate: fewer pairs (a queued repetition there takes seconds, and its ratio is far from 1).
/** A count flag: a positive whole number, or the default; anything else exits in one line. */
const countFlag = (name: string, fallback: number): number => {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (raw === undefined) return fallback;
  const r = z.coerce.number().int().positive().safeParse(raw);
  if (!r.success) {
    console.error(`bench:queues: --${name}: expected a positive whole number, got '${raw}'`);
    process.exit(2);
  }
  return r.data;
};
const REPS = countFlag('reps', ON_RESTATE ? (QUICK ? 3 : 5) : QUICK ? 4 : 10);
const OVERHEAD_ONLY = process.argv.includes('--overhead');
// SQLite: 5,000 steps a repetition (~0.1-0.3 s): 1,000 (the earlier size) took ~30 ms, a
// few of the scheduler's slices on a shared machine, and its ratios spread over ±50%.
const RUNS = countFlag('runs', ON_RESTATE ? 20 : QUICK ? 200 : 500);
const STEPS = 10;
const HANDOVER = ON_RESTATE ? (QUICK ? 20 : 60) : 200;
const DRAIN = ON_RESTATE ? (QUICK ? 100 : 500) : QUICK ? 2_000 : 10_000;

const wide = queue('bench-wide', { concurrency: 1_000_000 });
const one = queue('bench-one', { concurrency: 1 });
const ten = queue('bench-ten', { concurrency: 10 });

const plain = workflow('b-plain', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS; i++) await step.do(`s${i}`, () => i);
  });
});
const queued = workflow('b-queued', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS; i++) await step.do(`s${i}`, { queue: wide }, () => i);
  });
});
// The same with async bodies (an LLM call's shape): the slot's row is written while it runs.
const plainAsync = workflow('b-plain-async', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS; i++) await step.do(`s${i}`, async () => i);
  });
});
const queuedAsync = workflow('b-queued-async', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS; i++) await step.do(`s${i}`, { queue: wide }, async () => i);
  });
});
const spans: { start: number; end: number }[] = [];
const handover = workflow('b-handover', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('s', { queue: one }, async () => {
    const start = performance.now();
    await new Promise((r) => setTimeout(r, 1));
    spans.push({ start, end: performance.now() });
  }));
});
const drain = workflow('b-drain', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('s', { queue: ten }, () => 1));
});

// Run-level: each run holds a slot of `tenRuns` from its start to its end.
const tenRuns = queue('bench-ten-runs', { concurrency: 10 });
const drainRuns = workflow('b-drain-runs', { runs: { queue: tenRuns } }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('s', () => 1));
});

type Engine = Awaited<ReturnType<typeof createEngine>>;

async function withEngine<T>(fn: (e: Engine) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-queues-'));
  const engine = await createEngine({ backend: BACKEND, dataDir: dir, workflows: [plain, queued, plainAsync, queuedAsync, handover, drain, drainRuns] });
  await engine.start();
  try {
    return await fn(engine);
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Steps/s, and the process's CPU (user + system) per step in µs: on a shared machine the
 *  CPU is the steadier figure (wall time also counts other processes' turns). */
async function stepsPerSecond(engine: Engine, name: string): Promise<{ rate: number; cpuUs: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const ids = await Promise.all(Array.from({ length: RUNS }, () => engine.trigger(name, null).then((r) => r.runId)));
  await Promise.all(ids.map((id) => engine.result(id, { timeout: '300s' })));
  const cpu = process.cpuUsage(c0);
  return { rate: (RUNS * STEPS) / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / (RUNS * STEPS) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const range = (xs: number[], digits = 0) => `${Math.min(...xs).toFixed(digits)} to ${Math.max(...xs).toFixed(digits)}`;

/** Pairs of repetitions, the order alternating (AB, BA, ...): each pair's ratio compares two
 *  repetitions next to each other in time, so the load of other processes, the JIT's and the
 *  file's state are about the same for both. */
async function overhead(engine: Engine, label: string, plainName: string, queuedName: string): Promise<void> {
  const a: { rate: number; cpuUs: number }[] = [];
  const b: { rate: number; cpuUs: number }[] = [];
  for (let i = 0; i < REPS; i++) {
    if (i % 2 === 0) {
      a.push(await stepsPerSecond(engine, plainName));
      b.push(await stepsPerSecond(engine, queuedName));
    } else {
      b.push(await stepsPerSecond(engine, queuedName));
      a.push(await stepsPerSecond(engine, plainName));
    }
  }
  const fewer = a.map((x, i) => (1 - b[i]!.rate / x.rate) * 100);
  const more = a.map((x, i) => (b[i]!.cpuUs / x.cpuUs - 1) * 100);
  console.log(
    `overhead  ${label} (${RUNS} runs x ${STEPS} steps, ${REPS} pairs AB/BA): no queue ${median(a.map((x) => x.rate)).toFixed(0)} steps/s (${range(a.map((x) => x.rate))}), ` +
      `queue never binding ${median(b.map((x) => x.rate)).toFixed(0)} steps/s (${range(b.map((x) => x.rate))}); ` +
      `per pair: ${median(fewer).toFixed(1)}% fewer steps/s (median; ${range(fewer, 1)}%, middle half ${pct(fewer, 25).toFixed(1)} to ${pct(fewer, 75).toFixed(1)}%), ` +
      `CPU/step ${median(a.map((x) => x.cpuUs)).toFixed(1)} vs ${median(b.map((x) => x.cpuUs)).toFixed(1)} µs, ${median(more).toFixed(1)}% more (${range(more, 1)}%)`,
  );
}

async function overheads(engine: Engine): Promise<void> {
  await stepsPerSecond(engine, 'b-plain'); // warm-up
  await stepsPerSecond(engine, 'b-queued');
  await stepsPerSecond(engine, 'b-plain-async');
  await stepsPerSecond(engine, 'b-queued-async');
  await overhead(engine, 'sync bodies', 'b-plain', 'b-queued');
  await overhead(engine, 'async bodies', 'b-plain-async', 'b-queued-async');
}

async function main(): Promise<void> {
  console.log(`backend   ${BACKEND}`);
  await withEngine(overheads);
  if (OVERHEAD_ONLY) return;

  await withEngine(async (engine) => {
    const ids = [];
    for (let i = 0; i < HANDOVER; i++) ids.push((await engine.trigger('b-handover', null)).runId);
    await Promise.all(ids.map((id) => engine.result(id, { timeout: '600s' })));
  });
  spans.sort((x, y) => x.start - y.start);
  const gaps = spans.slice(1).map((s, i) => s.start - spans[i]!.end);
  console.log(`handover  concurrency 1, ${HANDOVER} bodies: end -> next start p50 ${pct(gaps, 50).toFixed(2)} ms, p99 ${pct(gaps, 99).toFixed(2)} ms`);

  for (const [name, what] of [['b-drain', 'runs whose step is queued'], ['b-drain-runs', 'runs queued (run-level)']] as const) {
    const rate = await withEngine(async (engine) => {
      const ids = [];
      for (let i = 0; i < DRAIN; i++) ids.push((await engine.trigger(name, null)).runId);
      const t0 = performance.now();
      await Promise.all(ids.map((id) => engine.result(id, { timeout: '1200s' })));
      return DRAIN / ((performance.now() - t0) / 1000);
    });
    console.log(`drain     ${DRAIN} ${what} on concurrency 10: ${rate.toFixed(0)} runs/s (measured from the last trigger)`);
  }
}

await main();
