import { runFileConformance } from './files/suite.ts';

// A real restate-server per test (started by the engine), Deno children served from the
// Restate run handler's step log. Half the cases (the other half: files-restate-b.test.ts),
// so the two run at the same time.
runFileConformance('restate', [], { index: 1, of: 2 });
