// Child process for workloads inside ONE run (issue 19: signal cost; issue 18: fan-out), so
// memory figures are this engine's alone. Usage: node --expose-gc --import tsx
// bench/child-run-shapes.ts '<json args>'. Prints one JSON line on stdout.
//   signals  one run consumes `n` signals in a loop; the parent's engine.signal() calls are
//            timed one by one (sent one after another): the first 50 vs the last 50 say
//            whether delivering the k-th signal costs what the first did.
//   fanout   one run does `await Promise.all(n x step.do(no-op))`; wall time to the result,
//            RSS and heap growth over the engine's idle baseline.
// A run that does not finish by `deadlineMs` is reported as an error line (never a hang).
import { createEngine, type Engine } from '../compose/index.ts';
import { manual, workflow } from '../sdk/index.ts';
import { writeFileSync } from 'node:fs';
import { peakRssMiB, rssMiB, treeRssMiB } from './lib/proc-mem.ts';
import { nowMs, summarize } from './lib/stats.ts';

interface Args {
  mode: 'signals' | 'fanout';
  backend: 'sqlite' | 'restate';
  durability: 'full' | 'normal';
  dataDir: string;
  n: number;
  deadlineMs: number;
}

const a = JSON.parse(process.argv[2]!) as Args;
const started = Date.now();
const timeLeft = () => Math.max(1, started + a.deadlineMs - Date.now());

const signalSink = workflow('bench-signal-sink', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    let sum = 0;
    for (let i = 0; i < (input as { n: number }).n; i++) sum += await step.waitForEvent<number>('tick');
    return sum;
  });
});

const fanOut = workflow('bench-fan-out', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const n = (input as { n: number }).n;
    const got = await Promise.all(Array.from({ length: n }, (_, i) => step.do(`item-${i}`, () => i)));
    return got.length;
  });
});

async function withDeadline<T>(p: Promise<T>, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no result within ${Math.round(a.deadlineMs / 1000)} s, the run stalled`)), timeLeft()))),
    ]);
  } finally {
    clearTimeout(t);
  }
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

async function signals(engine: Engine): Promise<Record<string, unknown>> {
  // Warm-up on another run: the first measured signals must not pay for cold code paths.
  const warm = await engine.trigger(signalSink.name, { n: 20 });
  for (let i = 0; i < 20; i++) await withDeadline(engine.signal(warm.runId, 'tick', 1), 'warm-up signal');
  await withDeadline(engine.result(warm.runId, { timeout: timeLeft() }), 'warm-up signal sink');
  const { runId } = await engine.trigger(signalSink.name, { n: a.n });
  const lat: number[] = [];
  const t0 = nowMs();
  for (let i = 0; i < a.n; i++) {
    const s = nowMs();
    await withDeadline(engine.signal(runId, 'tick', 1), `signal ${i + 1}`);
    lat.push(nowMs() - s);
  }
  const sentMs = nowMs() - t0;
  const v = await withDeadline(engine.result(runId, { timeout: timeLeft() }), 'signal sink result');
  if (v.status !== 'succeeded' || v.output !== a.n) throw new Error(`run ended ${v.status} with ${JSON.stringify(v.output)} (expected ${a.n})`);
  const k = Math.min(50, Math.floor(a.n / 2));
  const first = lat.slice(0, k);
  const last = lat.slice(-k);
  return {
    n: a.n,
    sentMs,
    firstMeanMs: mean(first),
    lastMeanMs: mean(last),
    firstMedianMs: summarize(first).median,
    lastMedianMs: summarize(last).median,
    // Medians: one slow call (GC, a busy neighbour) moves a mean of 50 by several percent.
    lastOverFirst: summarize(last).median / summarize(first).median,
    doneAfterLastSignalMs: nowMs() - t0 - sentMs,
  };
}

async function fanout(engine: Engine): Promise<Record<string, unknown>> {
  // Baseline: the engine started and warmed by one small run of the same shape.
  const warm = await engine.trigger(fanOut.name, { n: 10 });
  await withDeadline(engine.result(warm.runId, { timeout: timeLeft() }), 'warm-up fan-out');
  gc();
  // Resets this process's RSS high-water mark (VmHWM), so the peak read after the run is the
  // run's own (between the 25 ms samples too); where that is refused, the samples stand.
  let hwm = false;
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    hwm = true;
  } catch {
    // not Linux, or not permitted
  }
  const base = { rss: rssMiB(), tree: treeRssMiB(), heap: process.memoryUsage().heapUsed };
  let peakHeap = base.heap;
  let peakTree = base.tree;
  let peakRss = base.rss;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    peakRss = Math.max(peakRss, rssMiB());
    peakTree = Math.max(peakTree, treeRssMiB());
  }, 25);
  const t0 = nowMs();
  try {
    const { runId } = await engine.trigger(fanOut.name, { n: a.n });
    // Issue 18: on Restate concurrent step.do can stall ("awaitNext already pending").
    const what = `${a.n}-way fan-out${a.backend === 'restate' ? ' (on Restate, see issue 18: concurrent step.do can stall)' : ''}`;
    const v = await withDeadline(engine.result(runId, { timeout: timeLeft() }), what);
    const ms = nowMs() - t0;
    if (v.status !== 'succeeded' || v.output !== a.n) throw new Error(`run ended ${v.status}: ${v.error?.message ?? JSON.stringify(v.output)}`);
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    peakRss = Math.max(peakRss, rssMiB(), hwm ? peakRssMiB() : 0);
    return {
      n: a.n,
      ms,
      stepsPerS: a.n / (ms / 1000),
      // Peak (high-water mark, or samples every 25 ms) minus the warmed baseline.
      rssDeltaMiB: peakRss - base.rss,
      // With a restate-server child, its growth is in the tree figure.
      treeRssDeltaMiB: peakTree - base.tree,
      heapDeltaMiB: (peakHeap - base.heap) / 1024 / 1024,
    };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const workflows = [signalSink, fanOut];
  const engine = await createEngine({ backend: a.backend, dataDir: a.dataDir, workflows, durability: a.durability });
  await withDeadline(engine.start(), 'engine start');
  let out: Record<string, unknown>;
  try {
    out = a.mode === 'signals' ? await signals(engine) : await fanout(engine);
  } catch (err) {
    out = { error: (err as Error)?.message ?? String(err) };
  }
  process.stdout.write(JSON.stringify({ mode: a.mode, ...out }) + '\n');
  // A stalled run must not hold the child: a bounded stop, then exit.
  await Promise.race([engine.stop().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
  process.exit(0);
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ mode: a.mode, error: (err as Error)?.message ?? String(err) }) + '\n');
  process.exit(1);
});
