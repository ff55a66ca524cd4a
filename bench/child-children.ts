// Child process for the child-run rows (issue 40, docs/children.md), one repetition per
// process so memory figures are this engine's alone. Usage: node --expose-gc --import tsx
// bench/child-children.ts '<json args>'. Prints one JSON line on stdout.
//   cost    one run awaiting `n` children one after another (each child one no-op step)
//           against one run doing `n` no-op steps one after another: ms per awaited child,
//           ms per step, and their ratio (both runs in the same engine, interleaved warm-up);
//   fanout  one run doing `await Promise.all(n x step.invoke(child of one no-op step))`:
//           ms to its result, peak RSS growth over the warmed engine (this process, and the
//           process tree: restate-server on Restate), heap growth.
// A run that does not finish by `deadlineMs` is reported as an error line (never a hang).
import { writeFileSync } from 'node:fs';
import { createEngine, type Engine } from '../compose/index.ts';
import { manual, workflow } from '../sdk/index.ts';
import { peakRssMiB, processTree, rssMiB } from './lib/proc-mem.ts';
import { nowMs } from './lib/stats.ts';

interface Args {
  mode: 'cost' | 'fanout';
  backend: 'sqlite' | 'restate';
  durability: 'full' | 'normal';
  dataDir: string;
  n: number;
  deadlineMs: number;
}

const a = JSON.parse(process.argv[2]!) as Args;
const started = Date.now();
const timeLeft = () => Math.max(1, started + a.deadlineMs - Date.now());

const leaf = workflow('bench-child-leaf', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('one', () => input as number));
});
const awaitedChildren = workflow('bench-child-awaited', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    let sum = 0;
    for (let i = 0; i < (input as number); i++) sum += await step.invoke<number>(`c${i}`, leaf, 1);
    return sum;
  });
});
const awaitedSteps = workflow('bench-child-steps', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    let sum = 0;
    for (let i = 0; i < (input as number); i++) sum += await step.do(`s${i}`, () => 1);
    return sum;
  });
});
const fanOut = workflow('bench-child-fan-out', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => (await Promise.all(Array.from({ length: input as number }, (_, i) => step.invoke<number>(`c${i}`, leaf, 1)))).length);
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

/** ms from trigger to a succeeded result of `wf` with input `n` (checked: output `expect`). */
async function timed(engine: Engine, wf: string, n: number, expect: number): Promise<number> {
  const t0 = nowMs();
  const { runId } = await engine.trigger(wf, n);
  const v = await withDeadline(engine.result(runId, { timeout: timeLeft() }), `${wf} n=${n}`);
  const ms = nowMs() - t0;
  if (v.status !== 'succeeded' || v.output !== expect) throw new Error(`${wf} ended ${v.status}: ${v.error?.message ?? JSON.stringify(v.output)} (expected ${expect})`);
  return ms;
}

async function cost(engine: Engine): Promise<Record<string, unknown>> {
  // Warm-up of both shapes: the measured runs must not pay for cold code paths.
  await timed(engine, awaitedSteps.name, 5, 5);
  await timed(engine, awaitedChildren.name, 5, 5);
  const stepMs = await timed(engine, awaitedSteps.name, a.n, a.n);
  const childMs = await timed(engine, awaitedChildren.name, a.n, a.n);
  return { n: a.n, msPerStep: stepMs / a.n, msPerChild: childMs / a.n, childOverStep: childMs / stepMs };
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

async function fanout(engine: Engine): Promise<Record<string, unknown>> {
  await timed(engine, fanOut.name, 10, 10);
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
  // The tree (this process and restate-server) is listed once: a scan of /proc per sample
  // took ~9% of the process's CPU in a 600-child fan-out, a cost the figure then carried.
  const tree = processTree(process.pid);
  const treeRss = () => tree.reduce((sum, pid) => sum + (rssMiB(pid) || 0), 0);
  const base = { rss: rssMiB(), tree: treeRss(), heap: process.memoryUsage().heapUsed };
  let peak = { ...base };
  const sample = () => (peak = { rss: Math.max(peak.rss, rssMiB()), tree: Math.max(peak.tree, treeRss()), heap: Math.max(peak.heap, process.memoryUsage().heapUsed) });
  const sampler = setInterval(sample, 50);
  try {
    const ms = await timed(engine, fanOut.name, a.n, a.n);
    sample();
    const rss = Math.max(peak.rss, hwm ? peakRssMiB() : 0);
    return {
      n: a.n,
      ms,
      childrenPerS: a.n / (ms / 1000),
      rssDeltaMiB: rss - base.rss,
      treeRssDeltaMiB: peak.tree - base.tree,
      heapDeltaMiB: (peak.heap - base.heap) / 1024 / 1024,
    };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const engine = await createEngine({ backend: a.backend, dataDir: a.dataDir, workflows: [leaf, awaitedChildren, awaitedSteps, fanOut], durability: a.durability });
  await withDeadline(engine.start(), 'engine start');
  let out: Record<string, unknown>;
  try {
    out = a.mode === 'cost' ? await cost(engine) : await fanout(engine);
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
