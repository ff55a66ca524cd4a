import { runFileConformance } from './files/suite.ts';

// The other half of files-restate-a.test.ts's suite (see there).
runFileConformance('restate', [], { index: 2, of: 2 });
