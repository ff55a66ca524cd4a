import { restateTarget } from './restate-target.ts';
import { runConformance } from './suite.ts';

// Half the suite's cases (the other half: restate-b.test.ts), so the two run at the same time.
runConformance(restateTarget({ index: 1, of: 2 }));
