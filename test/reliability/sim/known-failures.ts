// Seeds of the CI slice (1-2000, fault points and concurrent branches on) that fail on
// today's engine because of the engine bugs shown by known-bugs.ts (found by this
// simulation, issue 18). The CI slice skips them, and says how many, until the bugs are
// fixed; `SIM_NO_SKIP=1 npx vitest run test/reliability/simulation-a.test.ts` runs them.
// Keyed by the first violation each seed reports, with the bug that gives it.
//
// After a fix: `npm run sim -- --seeds 2000` (or `SIM_NO_SKIP=1` on the slices), then drop
// every seed that passes; once those bugs are fixed this list should be empty. An engine
// change that moves a seed's course can also make a listed seed pass or another one fail:
// the list is data for today's engine, not a rule.
//
// Now: none. The five bugs known-bugs.ts shows were fixed in RunSession (issue 18); the last
// three seeds that failed were harness artefacts (a crashed engine's zombie session; an
// attempt a crash lost counted as final), fixed in harness.ts.
const BY_FIRST_VIOLATION: Record<string, readonly number[]> = {
  // Found on 2026-12-04 as the simulation learned queues (issue 39), not yet diagnosed: 4 bodies
  // of a rate-limited queue start at one sim instant with a limit of 3 (`npm run sim -- --seed
  // 1124`). Whether the engine exceeds the limit (a start not counted across a crash or stop)
  // or the check counts a body the limit rightly did not (a dead engine's) is open.
  'q-rate: 4 bodies of a queue started within 0 ms, limit 3': [1124, 1477],
};

export const KNOWN_FAILURES: ReadonlySet<number> = new Set(Object.values(BY_FIRST_VIOLATION).flat());
