// The CI slice of the simulation as a vitest test: a fixed range of seeds in one file (two
// files split the budget across both cores). A failing seed is reported with its one-line
// reproduction; the data dir of the failing seed is kept for inspection. Seeds that fail on a
// known, reported engine bug (known-failures.ts) are skipped and counted (SIM_NO_SKIP=1 runs
// them too).
import { expect, it } from 'vitest';
import { runSeed, type SimOptions } from './harness.ts';
import { KNOWN_FAILURES } from './known-failures.ts';

export function simulateSeeds(first: number, count: number, options: SimOptions = { faultPoints: true }): void {
  it(`simulation: seeds ${first}..${first + count - 1} hold every invariant`, async () => {
    const failures: string[] = [];
    const skipped: number[] = [];
    const totals = { runs: 0, attempts: 0, crashes: 0, restarts: 0, clockJumps: 0 };
    // The list holds seeds as they run with fault points and concurrent branches.
    const skip = options.faultPoints === true && options.concurrency !== false && !process.env.SIM_NO_SKIP;
    for (let seed = first; seed < first + count; seed++) {
      if (skip && KNOWN_FAILURES.has(seed)) {
        skipped.push(seed);
        continue;
      }
      const r = await runSeed(seed, options);
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r[k];
      if (r.violations.length) {
        failures.push(`seed ${seed}: ${r.violations[0]} (data dir ${r.dataDir}); reproduce: npm run sim -- --seed ${seed}${options.faultPoints ? '' : ' --no-fault-points'}`);
      }
    }
    const known = skipped.length ? `; ${skipped.length} seeds skipped: they fail on known engine bugs (sim/known-failures.ts, npx tsx test/reliability/sim/known-bugs.ts)` : '';
    console.info(`simulation ${first}..${first + count - 1}: ${JSON.stringify(totals)}, ${failures.length} failing seeds${known}`);
    expect(failures).toEqual([]);
  }, 300_000);
}
