// What the host's late event-loop turns are made of, on the production build (dist/; run
// `npm run build` first). The bench's lag workload (100 concurrent 10-step runs, durability
// 'full', 1,000 warm-up runs), with a 1 ms timer chain beside it: each tick's interval, the
// scavenges that overlap it (PerformanceObserver 'gc') and every thread's CPU and run-queue time
// during it (/proc/self/task/<tid>/schedstat, Linux). A late tick is one whose interval is at
// least LATE_MS (argv[2], default 2.5). The timer chain and the /proc reads add load of their
// own: the p99 here is a little above the bench row's; the split is what this is for.
//   node --import tsx bench/probes/lag-ticks.ts [LATE_MS] [RUNS]
import { PerformanceObserver } from 'node:perf_hooks';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../lib/children.ts';
import { STEP_RESULT, STEPS_PER_RUN } from '../lib/workflows.ts';

// Threads there before the engine loads are node's own (V8's platform workers: GC helpers and
// background compiles); libuv's pool and the checkpoint worker (nice 10) come later.
const task = `/proc/${process.pid}/task`;
const main = String(process.pid);
const nodeThreads = new Set(readdirSync(task));
const LATE_MS = Number(process.argv[2] ?? 2.5);
const RUNS = Number(process.argv[3] ?? 5000);
type Built = { createEngine: (o: object) => Promise<Engine>; workflow: (n: string, f: (w: WorkflowBuilder) => void) => unknown; manual: () => unknown };
type Engine = { start(): Promise<void>; stop(): Promise<void>; trigger(w: string, i: object): Promise<{ runId: string }>; result(id: string, o: object): Promise<{ status: string }> };
type WorkflowBuilder = { trigger(t: unknown): void; run(f: (c: { step: { do(n: string, f: () => unknown): Promise<unknown> } }) => Promise<unknown>): void };
const { createEngine } = (await import(join(REPO, 'dist', 'index.js'))) as Built;
const { workflow, manual } = (await import(join(REPO, 'dist', 'sdk.js'))) as Built;

// Defined with the built SDK (dist/sdk.js), for the built engine; the same workflow as bench/lib/workflows.ts.
const tenSteps = workflow('bench-ten-steps', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS_PER_RUN; i++) await step.do(`s${i}`, () => STEP_RESULT);
    return { steps: STEPS_PER_RUN };
  });
});
const dataDir = mkdtempSync(join(tmpdir(), 'lag-ticks-'));
const engine = await createEngine({ dataDir, workflows: [tenSteps], durability: 'full', maxConcurrentRuns: 1000 });
await engine.start();
const load = async (runs: number) => {
  let next = 0;
  const client = async () => {
    while (next++ < runs) {
      const { runId } = await engine.trigger('bench-ten-steps', {});
      const v = await engine.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`run ended ${v.status}`);
    }
  };
  await Promise.all(Array.from({ length: 100 }, client));
};
await load(1000);

/** Every thread's [ran, waited runnable] in ms, cumulative. */
const sched = () => {
  const m = new Map<string, [number, number]>();
  for (const tid of readdirSync(task)) {
    try {
      const [ran, waited] = readFileSync(`${task}/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      m.set(tid, [ran! / 1e6, waited! / 1e6]);
    } catch {
      // the thread ended
    }
  }
  return m;
};
const nice = (tid: string) => {
  try {
    return readFileSync(`${task}/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16];
  } catch {
    return '?';
  }
};
const ticks: { t0: number; t1: number; d: Map<string, [number, number]> }[] = [];
const gcs: { start: number; end: number }[] = [];
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === 1) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
});
obs.observe({ entryTypes: ['gc'] });
let on = true;
let prev = sched();
let last = performance.now();
const tick = () => {
  const now = performance.now();
  const cur = sched();
  const d = new Map<string, [number, number]>();
  for (const [tid, [r, w]] of cur) {
    const p = prev.get(tid) ?? [r, w];
    d.set(tid, [r - p[0], w - p[1]]);
  }
  ticks.push({ t0: last, t1: now, d });
  prev = cur;
  last = performance.now();
  if (on) setTimeout(tick, 1);
};
setTimeout(tick, 1);
await load(RUNS);
on = false;
await new Promise((r) => setTimeout(r, 20));
obs.disconnect();
const label = new Map([...prev.keys()].map((tid) => {
  const n = nice(tid);
  return [tid, tid === main ? 'main' : `${tid} ${nodeThreads.has(tid) ? 'node/V8' : n === '10' ? 'checkpoint worker' : 'libuv pool'}`];
}));
await engine.stop();
rmSync(dataDir, { recursive: true, force: true });

const intervals = ticks.map((t) => t.t1 - t.t0).sort((a, b) => a - b);
const late = ticks.filter((t) => t.t1 - t.t0 >= LATE_MS);
const withGc = late.filter((t) => gcs.some((g) => g.start < t.t1 && g.end > t.t0));
const withoutGc = late.filter((t) => !withGc.includes(t));
const per = (f: (t: (typeof ticks)[number]) => number, of: typeof ticks) => (of.length ? of.reduce((a, t) => a + f(t), 0) / of.length : 0);
const others = new Map<string, number>();
for (const t of late) for (const [tid, [r]] of t.d) if (tid !== main) others.set(tid, (others.get(tid) ?? 0) + r / late.length);
console.log(JSON.stringify({
  ticks: ticks.length, p50: +intervals[intervals.length >> 1]!.toFixed(2), p99: +intervals[Math.floor(intervals.length * 0.99)]!.toFixed(2),
  scavenges: gcs.length, lateMs: LATE_MS, late: late.length, lateWithScavenge: withGc.length,
  perLateTick: {
    intervalMs: +per((t) => t.t1 - t.t0, late).toFixed(2), mainRanMs: +per((t) => t.d.get(main)?.[0] ?? 0, late).toFixed(2),
    mainWaitedRunnableMs: +per((t) => t.d.get(main)?.[1] ?? 0, late).toFixed(2),
    otherThreadsRanMs: Object.fromEntries([...others].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([tid, ms]) => [label.get(tid) ?? tid, +ms.toFixed(2)])),
  },
  lateWithoutScavenge: {
    mainRanMs: +per((t) => t.d.get(main)?.[0] ?? 0, withoutGc).toFixed(2),
    mainWaitedRunnableMs: +per((t) => t.d.get(main)?.[1] ?? 0, withoutGc).toFixed(2),
  },
}));
