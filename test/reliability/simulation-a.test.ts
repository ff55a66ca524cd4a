// CI slice of the deterministic simulation, first half (see sim/harness.ts): fixed seeds,
// then the first half of the rotating slice (its start derived from the commit, sim/suite.ts).
// `npm run sim` and `npm run sim:long` run the long versions.
import { simulateRotating, simulateSeeds } from './sim/suite.ts';

simulateSeeds(1, 750);
simulateRotating(0, 2);
