import { runFileConformance } from './files/suite.ts';

// A real restate-server per test (started by the engine), Deno children served from the
// Restate run handler's step log.
runFileConformance('restate');
