// `npm run sim -- --seeds 100000 [--from 1]` or `npm run sim -- --seed 1234`: the long run
// of the deterministic simulation. Prints a failing seed with its one-line reproduction and
// the totals at the end; exit code 1 if any seed failed. `--no-fault-points`, and
// `--no-concurrency` for the sequential workflows seeds built before groups existed,
// `--no-children` for the workflows seeds built before child runs existed, `--no-queues` for
// those built before queues existed.
import { runSeed, type SeedReport } from './harness.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const one = flag('--seed');
const from = Number(flag('--from') ?? 1);
const count = one !== undefined ? 1 : Number(flag('--seeds') ?? 1000);
const first = one !== undefined ? Number(one) : from;
const faultPoints = !args.includes('--no-fault-points');
const concurrency = !args.includes('--no-concurrency');
const children = !args.includes('--no-children');
const queues = !args.includes('--no-queues');
const budgetMs = flag('--minutes') ? Number(flag('--minutes')) * 60_000 : Infinity;

const totals = { seeds: 0, failed: 0, runs: 0, attempts: 0, actions: 0, crashes: 0, restarts: 0, clockJumps: 0, signals: 0, duplicates: 0, childCalls: 0, queuedBodies: 0 };
const faultCrashes: Record<string, number> = {};
const began = Date.now();
for (let seed = first; seed < first + count; seed++) {
  if (Date.now() - began > budgetMs) break;
  const r: SeedReport = await runSeed(seed, { faultPoints, concurrency, children, queues });
  totals.seeds++;
  for (const k of ['runs', 'attempts', 'actions', 'crashes', 'restarts', 'clockJumps', 'signals', 'duplicates', 'childCalls', 'queuedBodies'] as const) totals[k] += r[k];
  for (const [k, v] of Object.entries(r.faultCrashes)) faultCrashes[k] = (faultCrashes[k] ?? 0) + (v ?? 0);
  if (r.violations.length) {
    totals.failed++;
    console.log(`SIM FAIL seed=${seed}: ${r.violations[0]}`);
    for (const v of r.violations.slice(1, 5)) console.log(`  also: ${v}`);
    console.log(`  data dir kept: ${r.dataDir}`);
    console.log(`  reproduce: npm run sim -- --seed ${seed}${faultPoints ? '' : ' --no-fault-points'}${concurrency ? '' : ' --no-concurrency'}${children ? '' : ' --no-children'}${queues ? '' : ' --no-queues'}`);
  }
  if (totals.seeds % 1000 === 0) console.log(`... ${totals.seeds} seeds, ${totals.failed} failed, ${Math.round((Date.now() - began) / 1000)}s`);
}
const secs = (Date.now() - began) / 1000;
console.log(JSON.stringify({ ...totals, faultCrashes, first, seconds: Math.round(secs), seedsPerSecond: +(totals.seeds / secs).toFixed(1) }));
process.exit(totals.failed ? 1 : 0);
