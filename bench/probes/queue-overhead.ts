// Probe (issue 39): a step through a queue that never binds against a plain step, on one warm
// engine (SQLite unless backend=restate), rounds interleaved AB BA so a noisy machine hits
// both sides alike; prints per-side median and range of steps/s and of process CPU per step,
// and with TX=1 each round's SQLite transactions and writes (a queued step adds none).
// Run: npx tsx bench/probes/queue-overhead.ts [rounds=10] [runs=200] [only=plain|queued] [backend=restate]
// (only=: one side alone, for `node --import tsx --cpu-prof bench/probes/queue-overhead.ts`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../compose/index.ts';
import { manual, queue, workflow } from '../../sdk/index.ts';

const arg = (k: string, d: string) => process.argv.find((a) => a.startsWith(`${k}=`))?.slice(k.length + 1) ?? d;
const ROUNDS = Number(arg('rounds', '10'));
const RUNS = Number(arg('runs', '200'));
const ONLY = arg('only', '');
// fresh=1: a new engine (and file) per round, as bench/queues.ts measures on SQLite.
const FRESH = arg('fresh', '0') === '1';
const BACKEND = arg('backend', 'sqlite') as 'sqlite' | 'restate';
const STEPS = 10;
const wide = queue('probe-wide', { concurrency: 1_000_000 });
const plain = workflow('p-plain', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS; i++) await step.do(`s${i}`, () => i);
  });
});
const queued = workflow('p-queued', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS; i++) await step.do(`s${i}`, { queue: wide }, () => i);
  });
});

type Engine = Awaited<ReturnType<typeof createEngine>>;
async function open(): Promise<{ engine: Engine; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-probe-queue-'));
  const engine = await createEngine({ backend: BACKEND, dataDir: dir, workflows: [plain, queued], maxConcurrentRuns: 1000 });
  await engine.start();
  return { engine, close: async () => (await engine.stop(), rmSync(dir, { recursive: true, force: true })) };
}
const shared = FRESH ? undefined : await open();
async function round(name: string): Promise<{ rate: number; cpuUs: number }> {
  const own = shared ?? (await open());
  try {
    return await measure(own.engine, name);
  } finally {
    if (!shared) await own.close();
  }
}
async function measure(engine: Engine, name: string): Promise<{ rate: number; cpuUs: number }> {
  const st = (engine.executor as unknown as { commitStats?: { transactions: number; writes: number } }).commitStats ?? { transactions: 0, writes: 0 };
  const tx0 = st.transactions, w0 = st.writes;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const ids = await Promise.all(Array.from({ length: RUNS }, () => engine.trigger(name, null).then((r) => r.runId)));
  await Promise.all(ids.map((id) => engine.result(id, { timeout: '300s' })));
  const c = process.cpuUsage(c0);
  if (process.env.TX) console.log(name, 'transactions', st.transactions - tx0, 'writes', st.writes - w0);
  return { rate: (RUNS * STEPS) / ((performance.now() - t0) / 1000), cpuUs: (c.user + c.system) / (RUNS * STEPS) };
}
const sides = ONLY ? [`p-${ONLY}`] : ['p-plain', 'p-queued'];
for (const s of sides) await round(s); // warm-up
const got = new Map<string, { rate: number; cpuUs: number }[]>(sides.map((s) => [s, []]));
for (let i = 0; i < ROUNDS; i++) for (const s of i % 2 ? [...sides].reverse() : sides) got.get(s)!.push(await round(s));
await shared?.close();
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
const range = (xs: number[], d = 0) => `${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)}`;
for (const [s, xs] of got) console.log(`${s.padEnd(9)} ${median(xs.map((x) => x.rate)).toFixed(0)} steps/s (${range(xs.map((x) => x.rate))}), CPU/step ${median(xs.map((x) => x.cpuUs)).toFixed(1)} µs (${range(xs.map((x) => x.cpuUs), 1)})`);
if (!ONLY) {
  const a = got.get('p-plain')!, b = got.get('p-queued')!;
  // Paired: round i's queued against round i's plain (adjacent in time).
  const ratios = a.map((x, i) => 1 - b[i]!.rate / x.rate);
  console.log(`overhead  ${(median(ratios) * 100).toFixed(1)}% fewer steps/s (paired, ${ROUNDS} rounds: ${range(ratios.map((r) => r * 100), 1)}%); CPU/step ${((median(b.map((x) => x.cpuUs)) / median(a.map((x) => x.cpuUs)) - 1) * 100).toFixed(1)}% more`);
}
