// The child-run rows (issue 40, docs/children.md), each repetition in its own child process
// (bench/child-children.ts):
//   cost    ms per awaited child (`await step.invoke` of a one-step child, one after another
//           in one run) against ms per step (`await step.do`, one after another in one run),
//           and their ratio;
//   fanout  one run awaiting `Promise.all(n x step.invoke(one-step child))`: ms to its result,
//           peak RSS growth (this process; and with restate-server, the process tree).
// The full run fans out 1,000 children on both backends (issue 40 asks for 1,000; Restate's
// takes ~20 s a repetition here); --quick runs smaller ones. Every cell names its n.
import { runChild } from './children.ts';
import type { Fig } from './report.ts';
import type { ShapeSpec } from './run-shapes.ts';
import { summarize } from './stats.ts';

export interface ChildSizes {
  cost: { sqlite: number; restate: number };
  fanOut: { sqlite: number; restate: number };
}
export const CHILD_SIZES: ChildSizes = { cost: { sqlite: 50, restate: 20 }, fanOut: { sqlite: 1000, restate: 1000 } };
export const CHILD_SIZES_QUICK: ChildSizes = { cost: { sqlite: 10, restate: 3 }, fanOut: { sqlite: 200, restate: 20 } };

function fig(samples: number[], unit: string): Fig {
  const s = summarize(samples);
  return { median: s.median, min: s.min, max: s.max, n: s.n, unit, samples: samples.map((x) => Number(x.toFixed(3))) };
}

async function reps(spec: ShapeSpec, mode: 'cost' | 'fanout', n: number, count: number, deadlineMs: number, dataDir: () => string, log: (...a: unknown[]) => void) {
  const out: Record<string, number>[] = [];
  for (let r = 0; r < count; r++) {
    const o = await runChild('child-children.ts', { mode, backend: spec.backend, durability: spec.durability, dataDir: dataDir(), n, deadlineMs }, deadlineMs + 45_000, ['--expose-gc']);
    if (typeof o.error === 'string') throw new Error(o.error);
    out.push(o as Record<string, number>);
    log(`${spec.key} children ${mode} n=${n} rep ${r + 1}/${count}: ${JSON.stringify(o)}`);
  }
  return out;
}

export async function benchChildren(
  spec: ShapeSpec, o: { sizes: ChildSizes; reps: number; deadlineMs: number; dataDir: () => string; log: (...a: unknown[]) => void },
): Promise<Record<string, unknown>> {
  const costN = o.sizes.cost[spec.backend];
  const fanN = o.sizes.fanOut[spec.backend];
  // Each part on its own: a stalled fan-out leaves the cost figures standing.
  const part = async <T>(fn: () => Promise<T>): Promise<T | { na: string }> => {
    try {
      return await fn();
    } catch (err) {
      o.log(`${spec.key} children failed: ${(err as Error)?.stack ?? err}`);
      return { na: `failed: ${(err as Error)?.message ?? err}` };
    }
  };
  const cost = await part(async () => {
    const c = await reps(spec, 'cost', costN, o.reps, o.deadlineMs, o.dataDir, o.log);
    return {
      n: costN,
      msPerChild: fig(c.map((r) => r.msPerChild!), 'ms'),
      msPerStep: fig(c.map((r) => r.msPerStep!), 'ms'),
      childOverStep: fig(c.map((r) => r.childOverStep!), 'x'),
    };
  });
  const fanout = await part(async () => {
    const f = await reps(spec, 'fanout', fanN, o.reps, o.deadlineMs, o.dataDir, o.log);
    return {
      n: fanN,
      ms: fig(f.map((r) => r.ms!), 'ms'),
      childrenPerS: fig(f.map((r) => r.childrenPerS!), 'children/s'),
      rssDeltaMiB: fig(f.map((r) => r.rssDeltaMiB!), 'MiB'),
      treeRssDeltaMiB: fig(f.map((r) => r.treeRssDeltaMiB!), 'MiB'),
      heapDeltaMiB: fig(f.map((r) => r.heapDeltaMiB!), 'MiB'),
    };
  });
  return { cost, fanout };
}
