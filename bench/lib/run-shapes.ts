// Workloads inside ONE run, each repetition in its own child (bench/child-run-shapes.ts):
//   signals  300 signals to one run, sent one after another: median ms per engine.signal()
//            of the first 50 and of the last 50, and their ratio (flat = ~1; issue 19 asked
//            that the k-th signal cost what the first did); means are kept in the JSON;
//   fanout   one run doing `await Promise.all(1000 x step.do(no-op))` (issue 18): ms to its
//            result, RSS and heap growth over the warmed engine.
// A repetition that stalls ends at its deadline with a message, never a hang; the row then
// says why it has no figure.
import { runChild } from './children.ts';
import type { Fig } from './report.ts';
import { summarize } from './stats.ts';

export interface ShapeSpec {
  key: string;
  backend: 'sqlite' | 'restate';
  durability: 'full' | 'normal';
}

function fig(samples: number[], unit: string): Fig {
  const s = summarize(samples);
  return { median: s.median, min: s.min, max: s.max, n: s.n, unit, samples: samples.map((x) => Number(x.toFixed(3))) };
}

async function reps(
  spec: ShapeSpec, mode: 'signals' | 'fanout', n: number, count: number, deadlineMs: number, dataDir: () => string,
  log: (...a: unknown[]) => void,
): Promise<Record<string, number>[]> {
  const out: Record<string, number>[] = [];
  for (let r = 0; r < count; r++) {
    const o = await runChild('child-run-shapes.ts', { mode, backend: spec.backend, durability: spec.durability, dataDir: dataDir(), n, deadlineMs }, deadlineMs + 45_000, ['--expose-gc']);
    if (typeof o.error === 'string') throw new Error(o.error);
    out.push(o as Record<string, number>);
    log(`${spec.key} ${mode} n=${n} rep ${r + 1}/${count}: ${JSON.stringify(o)}`);
  }
  return out;
}

export async function benchSignals(spec: ShapeSpec, o: { n: number; reps: number; deadlineMs: number; dataDir: () => string; log: (...a: unknown[]) => void }): Promise<Record<string, unknown>> {
  const rs = await reps(spec, 'signals', o.n, o.reps, o.deadlineMs, o.dataDir, o.log);
  return {
    n: o.n,
    firstMedianMs: fig(rs.map((r) => r.firstMedianMs!), 'ms'),
    lastMedianMs: fig(rs.map((r) => r.lastMedianMs!), 'ms'),
    firstMeanMs: fig(rs.map((r) => r.firstMeanMs!), 'ms'),
    lastMeanMs: fig(rs.map((r) => r.lastMeanMs!), 'ms'),
    lastOverFirst: fig(rs.map((r) => r.lastOverFirst!), 'x'),
    sentMs: fig(rs.map((r) => r.sentMs!), 'ms'),
  };
}

export async function benchFanOut(spec: ShapeSpec, o: { n: number; reps: number; deadlineMs: number; dataDir: () => string; log: (...a: unknown[]) => void }): Promise<Record<string, unknown>> {
  const rs = await reps(spec, 'fanout', o.n, o.reps, o.deadlineMs, o.dataDir, o.log);
  return {
    n: o.n,
    ms: fig(rs.map((r) => r.ms!), 'ms'),
    stepsPerS: fig(rs.map((r) => r.stepsPerS!), 'steps/s'),
    rssDeltaMiB: fig(rs.map((r) => r.rssDeltaMiB!), 'MiB'),
    treeRssDeltaMiB: fig(rs.map((r) => r.treeRssDeltaMiB!), 'MiB'),
    heapDeltaMiB: fig(rs.map((r) => r.heapDeltaMiB!), 'MiB'),
  };
}
