// Child of bench/scale-runs.ts: one engine on a data dir that already holds N runs, from the
// production build (bench/.build/scale-runs-child.js, engine from dist/, plain node). Prints
// one JSON line. Modes, in the order the parent runs them on a point:
//   measure: start (the parent has just written to the file behind the engine's back, so this
//            start runs the whole-file check), then list pages, describe, a new run's steps/s,
//            one retention sweep, RSS; stops cleanly.
//   crash:   start after that clean stop, one run, then SIGKILL of itself (mid-life: no stop).
//   start:   start after that crash (the engine's own verified mark is intact), clean stop.
// List and describe go through engine.runs.list / runs.get: the same SqliteRunReader (the same
// SQL) `tranquil runs list` / `runs describe` read through on the CLI's read-only open.
import { writeSync } from 'node:fs';
import { createEngine } from '../compose/index.ts';
import { manual, workflow } from '../sdk/index.ts';

interface Args { dataDir: string; mode: 'measure' | 'crash' | 'start'; describeId?: string; retentionMaxAgeMs: number }
const a = JSON.parse(process.argv[process.argv.length - 1]!) as Args;

const STEPS = 10;
const tenSteps = workflow('ten', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    let x = 0;
    for (let i = 0; i < STEPS; i++) x = await step.do(`s${i}`, () => ({ i, pad: 'x'.repeat(150) })).then((r) => r.i);
    return x;
  });
});
const median = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)]!;
/** First call (statements prepared, pages maybe cold) and the median of up to 15 more
 *  (at least 3; no more once 3 s went on them: a whole-table read at 10^7 runs takes seconds). */
async function timed(fn: () => Promise<unknown>): Promise<[first: number, median: number]> {
  let t = performance.now();
  await fn();
  const first = performance.now() - t;
  const rest: number[] = [];
  const began = performance.now();
  for (let i = 0; i < 15 && (i < 3 || performance.now() - began < 3000); i++) {
    t = performance.now();
    await fn();
    rest.push(performance.now() - t);
  }
  return [first, median(rest)];
}
const out = (o: Record<string, unknown>) => writeSync(1, JSON.stringify(o) + '\n');

const t0 = performance.now();
const engine = await createEngine({ dataDir: a.dataDir, workflows: [tenSteps], retention: { maxAge: a.retentionMaxAgeMs, sweepEvery: '3650d' } });
await engine.start();
const startMs = performance.now() - t0;

if (a.mode === 'crash') {
  await engine.result((await engine.trigger('ten', null)).runId);
  out({ startMs });
  process.kill(process.pid, 'SIGKILL');
} else if (a.mode === 'start') {
  await engine.stop();
  out({ startMs });
} else {
  const r: Record<string, number> = { startMs };
  const list = async (label: string, filter: Parameters<typeof engine.runs.list>[0]) => {
    const [first, med] = await timed(() => engine.runs.list(filter));
    r[`${label}FirstMs`] = first;
    r[`${label}Ms`] = med;
    r[`${label}Rows`] = (await engine.runs.list(filter)).length;
  };
  await list('list', { limit: 100 });
  await list('listFiltered', { workflow: 'billing', status: 'failed', limit: 100 });
  await list('listRare', { workflow: 'legacy', limit: 100 });
  [r.describeFirstMs, r.describeMs] = await timed(() => engine.runs.get(a.describeId!));
  // A new run's steps/s: 10 runs of 10 steps at once, 3 rounds, the median.
  const rates: number[] = [];
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    await Promise.all(Array.from({ length: 10 }, async () => engine.result((await engine.trigger('ten', null)).runId)));
    rates.push((10 * STEPS) / ((performance.now() - t) / 1000));
  }
  r.stepsPerSec = median(rates);
  const t = performance.now();
  const gc = await engine.gc();
  r.retentionMs = performance.now() - t;
  r.retentionRuns = gc.runs;
  r.retentionRunsPerSec = gc.runs / (r.retentionMs / 1000);
  global.gc?.();
  await new Promise((res) => setTimeout(res, 200));
  r.rssMiB = process.memoryUsage().rss / 2 ** 20;
  await engine.stop();
  out(r);
}
