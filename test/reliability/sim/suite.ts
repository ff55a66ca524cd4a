// The CI slice of the simulation as a vitest test: a fixed range of seeds in one file (two
// files split the budget across both cores). A failing seed is reported with its one-line
// reproduction; the data dir of the failing seed is kept for inspection.
import { expect, it } from 'vitest';
import { runSeed, type SimOptions } from './harness.ts';

export function simulateSeeds(first: number, count: number, options: SimOptions = { faultPoints: true }): void {
  it(`simulation: seeds ${first}..${first + count - 1} hold every invariant`, async () => {
    const failures: string[] = [];
    const totals = { runs: 0, attempts: 0, crashes: 0, restarts: 0, clockJumps: 0 };
    for (let seed = first; seed < first + count; seed++) {
      const r = await runSeed(seed, options);
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r[k];
      if (r.violations.length) {
        failures.push(`seed ${seed}: ${r.violations[0]} (data dir ${r.dataDir}); reproduce: npm run sim -- --seed ${seed}${options.faultPoints ? '' : ' --no-fault-points'}`);
      }
    }
    console.info(`simulation ${first}..${first + count - 1}: ${JSON.stringify(totals)}, ${failures.length} failing seeds`);
    expect(failures).toEqual([]);
  }, 300_000);
}
