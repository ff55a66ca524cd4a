// CI slice of the deterministic simulation, second half (see sim/harness.ts): fixed seeds,
// then the second half of the rotating slice (sim/suite.ts).
import { simulateRotating, simulateSeeds } from './sim/suite.ts';

simulateSeeds(751, 750);
simulateRotating(1, 2);
