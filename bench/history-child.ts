// Child of bench/history.ts: opens an engine on a data dir that already holds N sleeping
// runs (prepared by the parent) and reports start time, RSS, run-start latency and timer
// wake lateness, as one JSON line. A child per size, so RSS is this engine's alone.
// history.ts runs it compiled (bench/.build/history-child.js, engine from dist/, plain node)
// and under the tsx dev loader.
import { createEngine } from '../compose/index.ts';
import { manual, workflow } from '../sdk/index.ts';

const dataDir = process.argv[2]!;
const one = workflow('one', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('a', () => 1));
});
const nap = workflow('nap', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    await step.sleepUntil('until', input.at as number);
    return step.do('woke', () => Date.now());
  });
});
const sleeper = workflow('sleeper', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.sleep('long', '3650d'));
});
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

const t0 = performance.now();
const engine = await createEngine({ dataDir, workflows: [one, nap, sleeper] });
await engine.start();
const startMs = performance.now() - t0;
const lat: number[] = [];
for (let i = 0; i < 60; i++) {
  const t = performance.now();
  await engine.result((await engine.trigger('one', null)).runId);
  if (i >= 10) lat.push(performance.now() - t);
}
// 200 timers due in 300 ms among the N pending ones: how late does each wake?
const at = Date.now() + 300;
const ids = await Promise.all(Array.from({ length: 200 }, async () => (await engine.trigger('nap', { at })).runId));
const late = await Promise.all(ids.map(async (id) => ((await engine.result(id, { timeout: '60s' })).output as number) - at));
global.gc?.();
await new Promise((r) => setTimeout(r, 300));
const rssMiB = process.memoryUsage().rss / 2 ** 20;
await engine.stop();
process.stdout.write(JSON.stringify({ startMs, runStartLatencyMs: median(lat), wakeLatenessP50Ms: median(late), wakeLatenessMaxMs: Math.max(...late), rssMiB }) + '\n');
