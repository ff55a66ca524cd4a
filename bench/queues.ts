// npm run bench:queues [-- --quick]: flow control on the SQLite backend (issue 39).
//  - overhead: steps/s of 100 concurrent runs x 10 steps, each step through a queue whose
//    limit never binds, against the same steps with no queue (median of reps, alternating),
//    with sync and with async bodies, and the process CPU per step (the steadier figure);
//  - handover: with concurrency 1, the time from one body's end to the next body's start
//    (the grant's durable write and the wake-up), p50 / p99;
//  - drain: runs/s of N runs queued at once on a queue of concurrency 10 (10,000; 2,000 in
//    --quick), the step queued, and the run itself queued (run-level, `runs: { queue }`).
// Also run by `npm run bench` (--only=queues), printed under its table; Restate has no queues yet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { manual, queue, workflow } from '../sdk/index.ts';

const QUICK = process.argv.includes('--quick');
const REPS = QUICK ? 3 : 5;
const RUNS = 100;
const STEPS = 10;
const DRAIN = QUICK ? 2_000 : 10_000;

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

async function withEngine<T>(fn: (e: Awaited<ReturnType<typeof createEngine>>) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-queues-'));
  const engine = await createEngine({ backend: 'sqlite', dataDir: dir, workflows: [plain, queued, plainAsync, queuedAsync, handover, drain, drainRuns] });
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
async function stepsPerSecond(name: string): Promise<{ rate: number; cpuUs: number }> {
  return withEngine(async (engine) => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const ids = await Promise.all(Array.from({ length: RUNS }, () => engine.trigger(name, null).then((r) => r.runId)));
    await Promise.all(ids.map((id) => engine.result(id, { timeout: '120s' })));
    const cpu = process.cpuUsage(c0);
    return { rate: (RUNS * STEPS) / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / (RUNS * STEPS) };
  });
}

async function overhead(label: string, plainName: string, queuedName: string): Promise<void> {
  const a: { rate: number; cpuUs: number }[] = [];
  const b: { rate: number; cpuUs: number }[] = [];
  for (let i = 0; i < REPS; i++) {
    a.push(await stepsPerSecond(plainName));
    b.push(await stepsPerSecond(queuedName));
  }
  const pa = median(a.map((x) => x.rate));
  const pb = median(b.map((x) => x.rate));
  const ca = median(a.map((x) => x.cpuUs));
  const cb = median(b.map((x) => x.cpuUs));
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;
  console.log(`overhead  ${label}: no queue ${pa.toFixed(0)} steps/s (${range(a.map((x) => x.rate))}), queue never binding ${pb.toFixed(0)} steps/s (${range(b.map((x) => x.rate))}): ${((1 - pb / pa) * 100).toFixed(1)}% fewer; CPU/step ${ca.toFixed(1)} vs ${cb.toFixed(1)} µs (${((cb / ca - 1) * 100).toFixed(1)}% more)`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function main(): Promise<void> {
  await stepsPerSecond('b-plain'); // warm-up
  await overhead('sync bodies', 'b-plain', 'b-queued');
  await overhead('async bodies', 'b-plain-async', 'b-queued-async');

  await withEngine(async (engine) => {
    const ids = [];
    for (let i = 0; i < 200; i++) ids.push((await engine.trigger('b-handover', null)).runId);
    await Promise.all(ids.map((id) => engine.result(id, { timeout: '120s' })));
  });
  spans.sort((x, y) => x.start - y.start);
  const gaps = spans.slice(1).map((s, i) => s.start - spans[i]!.end);
  console.log(`handover  concurrency 1, 200 bodies: end -> next start p50 ${pct(gaps, 50).toFixed(2)} ms, p99 ${pct(gaps, 99).toFixed(2)} ms`);

  for (const [name, what] of [['b-drain', 'runs whose step is queued'], ['b-drain-runs', 'runs queued (run-level)']] as const) {
    const rate = await withEngine(async (engine) => {
      const ids = [];
      for (let i = 0; i < DRAIN; i++) ids.push((await engine.trigger(name, null)).runId);
      const t0 = performance.now();
      await Promise.all(ids.map((id) => engine.result(id, { timeout: '600s' })));
      return DRAIN / ((performance.now() - t0) / 1000);
    });
    console.log(`drain     ${DRAIN} ${what} on concurrency 10: ${rate.toFixed(0)} runs/s (measured from the last trigger)`);
  }
}

await main();
