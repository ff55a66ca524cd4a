// npm run bench:queues [-- --quick] [-- --backend=sqlite|restate]: flow control (issue 39).
//  - overhead: steps/s of 100 concurrent runs x 10 steps, each step through a queue whose
//    limit never binds, against the same steps with no queue (median of reps, alternating),
//    with sync and with async bodies, and the process CPU per step (the steadier figure);
//  - handover: with concurrency 1, the time from one body's end to the next body's start
//    (the grant's durable write and the wake-up), p50 / p99;
//  - drain: runs/s of N runs queued at once on a queue of concurrency 10 (10,000; 2,000 in
//    --quick), the step queued, and the run itself queued (run-level, `runs: { queue }`).
// On Restate every figure is over restate-server (a queue is a virtual object there, a grant a
// few round trips: docs/flow-control.md), so its sizes are smaller and each names its n.
// Also run by `npm run bench` (--only=queues) once per backend, printed under its table.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { manual, queue, workflow } from '../sdk/index.ts';

const QUICK = process.argv.includes('--quick');
const BACKEND = (process.argv.find((a) => a.startsWith('--backend='))?.slice(10) ?? 'sqlite') as 'sqlite' | 'restate';
if (BACKEND !== 'sqlite' && BACKEND !== 'restate') throw new Error(`--backend: '${BACKEND}' is not sqlite or restate`);
const ON_RESTATE = BACKEND === 'restate';
const REPS = QUICK ? 3 : 5;
const RUNS = ON_RESTATE ? 20 : 100;
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

/** SQLite: a fresh file per measurement (one file's growth must not favour either side).
 *  Restate: one engine and restate-server for all (a server's start is seconds; both sides
 *  alternate on it, so its journal's growth is shared). */
async function measure(engine: Engine | undefined, name: string): Promise<{ rate: number; cpuUs: number }> {
  return engine ? stepsPerSecond(engine, name) : withEngine((e) => stepsPerSecond(e, name));
}

async function overhead(engine: Engine | undefined, label: string, plainName: string, queuedName: string): Promise<void> {
  const a: { rate: number; cpuUs: number }[] = [];
  const b: { rate: number; cpuUs: number }[] = [];
  for (let i = 0; i < REPS; i++) {
    a.push(await measure(engine, plainName));
    b.push(await measure(engine, queuedName));
  }
  const pa = median(a.map((x) => x.rate));
  const pb = median(b.map((x) => x.rate));
  const ca = median(a.map((x) => x.cpuUs));
  const cb = median(b.map((x) => x.cpuUs));
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;
  console.log(`overhead  ${label} (${RUNS} runs x ${STEPS} steps, ${REPS} reps): no queue ${pa.toFixed(0)} steps/s (${range(a.map((x) => x.rate))}), queue never binding ${pb.toFixed(0)} steps/s (${range(b.map((x) => x.rate))}): ${((1 - pb / pa) * 100).toFixed(1)}% fewer; CPU/step ${ca.toFixed(1)} vs ${cb.toFixed(1)} µs (${((cb / ca - 1) * 100).toFixed(1)}% more)`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function overheads(engine?: Engine): Promise<void> {
  await measure(engine, 'b-plain'); // warm-up
  await measure(engine, 'b-queued');
  await overhead(engine, 'sync bodies', 'b-plain', 'b-queued');
  await overhead(engine, 'async bodies', 'b-plain-async', 'b-queued-async');
}

async function main(): Promise<void> {
  console.log(`backend   ${BACKEND}`);
  if (ON_RESTATE) await withEngine(overheads);
  else await overheads();

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
