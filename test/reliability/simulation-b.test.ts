// CI slice of the deterministic simulation, second half (see sim/harness.ts).
import { simulateSeeds } from './sim/suite.ts';

simulateSeeds(1001, 1000);
