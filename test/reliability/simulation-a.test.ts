// CI slice of the deterministic simulation, first half (see sim/harness.ts). `npm run sim`
// runs the long version.
import { simulateSeeds } from './sim/suite.ts';

simulateSeeds(1, 750);
