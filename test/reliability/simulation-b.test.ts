// CI slice of the deterministic simulation, second half (see sim/harness.ts).
import { simulateSeeds } from './sim/suite.ts';

simulateSeeds(751, 750);
