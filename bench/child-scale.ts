// Child of bench/scale-shapes.ts (npm run bench:scale): one point of a scale curve, run from the
// production build (bench/.build/child-scale.js, engine from dist/, plain node), so each
// figure is one fresh engine's alone. Prints one JSON line on stdout.
//   steps-run     one run of `n` sequential step.do (~200 B each), durability full; when the
//                 step after the last one starts (every earlier one is committed: the body
//                 awaited it), reports time per step, RSS and heap, then SIGKILLs itself (a
//                 crash before the result)
//   steps-replay  a fresh engine on that file: open, start and the run's replay of its `n`
//                 recorded steps up to the step after them
//   sleepers      an engine on a file the parent seeded with `n` sleeping runs, a tenth of them
//                 due at `at`: RSS while all sleep, then each due run's wake lateness
//   concurrent    `conc` clients each starting 10-step runs one after another (`runs` in all,
//                 after `warmRuns`): steps/s, run latency (trigger to result), host event-loop lag
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { writeSync } from 'node:fs';
import { createEngine } from '../compose/index.ts';
import { manual, workflow } from '../sdk/index.ts';
import { ALL_WORKFLOWS, sleeper, STEP_RESULT, STEPS_PER_RUN, tenSteps, wakeProbe } from './lib/workflows.ts';
import { peakRssMiB, rssMiB } from './lib/proc-mem.ts';
import { percentile } from './lib/stats.ts';

interface Args { mode: 'steps-run' | 'steps-replay' | 'sleepers' | 'concurrent'; dataDir: string; n?: number; at?: number; conc?: number; runs?: number; warmRuns?: number }
const a = JSON.parse(process.argv[2]!) as Args;
const MiB = 2 ** 20;
const print = (o: Record<string, unknown>) => writeSync(1, JSON.stringify(o) + '\n'); // synchronous: a SIGKILL may follow
const memory = () => {
  (globalThis as { gc?: () => void }).gc?.(); // run with --expose-gc: the heap still reachable
  const m = process.memoryUsage();
  return { rssMiB: m.rss / MiB, heapMiB: m.heapUsed / MiB, peakRssMiB: peakRssMiB() };
};

/** Called by the step after the last sequential one: in steps-run the crash, in steps-replay the finish line. */
let afterLast: () => void = () => {};
const longRun = workflow('scale-long-run', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const n = (input as { n: number }).n;
    for (let i = 0; i < n; i++) await step.do(`s${i}`, () => STEP_RESULT);
    await step.do('after-last', () => afterLast());
    return n;
  });
});

const open = async (maxConcurrentRuns = 1000) => {
  const e = await createEngine({ dataDir: a.dataDir, workflows: [...ALL_WORKFLOWS, longRun], durability: 'full', maxConcurrentRuns });
  await e.start();
  return e;
};

if (a.mode === 'steps-run') {
  const engine = await open();
  const t0 = performance.now();
  afterLast = () => {
    const ms = performance.now() - t0;
    print({ runMs: ms, usPerStep: (ms * 1000) / a.n!, ...memory() });
    process.kill(process.pid, 'SIGKILL');
  };
  await engine.trigger(longRun.name, { n: a.n });
} else if (a.mode === 'steps-replay') {
  const t0 = performance.now();
  let replayedAt = 0;
  const replayed = new Promise<void>((r) => (afterLast = () => ((replayedAt = performance.now()), r())));
  const engine = await open();
  const startMs = performance.now() - t0;
  await replayed;
  // start() dispatches the unfinished run and the replay runs inside it, so the figure is open
  // to replayed (it includes the whole-file check a start after a crash makes, ~2 ms per MB).
  const replayMs = replayedAt - t0;
  const out = { startMs, replayMs, replayUsPerStep: (replayMs * 1000) / a.n!, ...memory() };
  await engine.stop();
  print(out);
} else if (a.mode === 'sleepers') {
  const due = Math.round(a.n! / 10);
  const late = new Float64Array(due);
  let woke = 0;
  let allWoke = () => {};
  const done = new Promise<void>((r) => (allWoke = r));
  wakeProbe.onWake = (at, now) => {
    if (woke < due) late[woke] = now - at;
    if (++woke === due) allWoke();
  };
  const t0 = performance.now();
  const engine = await open();
  const startMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1000));
  const asleep = memory();
  const beforeInstant = Date.now() < a.at!;
  await done;
  const out = {
    startMs, beforeInstant, sleepingRssMiB: asleep.rssMiB, sleepingHeapMiB: asleep.heapMiB, due,
    latenessP50Ms: percentile(late, 50), latenessP99Ms: percentile(late, 99), latenessMaxMs: percentile(late, 100), peakRssMiB: peakRssMiB(),
  };
  await engine.stop();
  print(out);
} else {
  const conc = a.conc!;
  const engine = await open(Math.max(1000, conc));
  const loop = async (runs: number, lat?: number[]) => {
    let next = 0;
    const client = async () => {
      while (next++ < runs) {
        const t = performance.now();
        const v = await engine.result((await engine.trigger(tenSteps.name, {})).runId, { timeout: '300s' });
        if (v.status !== 'succeeded') throw new Error(`run ended ${v.status}`);
        lat?.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: Math.min(conc, runs) }, client));
  };
  await loop(a.warmRuns ?? 0);
  const lat: number[] = [];
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  await loop(a.runs!, lat);
  const seconds = (performance.now() - t0) / 1000;
  h.disable();
  const out = {
    stepsPerS: (a.runs! * STEPS_PER_RUN) / seconds, runP50Ms: percentile(lat, 50), runP99Ms: percentile(lat, 99),
    lagP50Ms: h.percentile(50) / 1e6, lagP99Ms: h.percentile(99) / 1e6, lagMaxMs: h.max / 1e6, rssMiB: rssMiB(), peakRssMiB: peakRssMiB(),
  };
  await engine.stop();
  print(out);
}
