import { runFileConformance } from './files/suite.ts';
import { PAUSE_BETWEEN_STEPS } from './files/control-runs.ts';

// A real restate-server per test (started by the engine), Deno children served from the
// Restate run handler's step log. Half the cases (the other half: files-restate-b.test.ts),
// so the two run at the same time.
runFileConformance('restate', [{
  // Restate learns a pause in its journal's order (the run handler's watch of the durable
  // promise ~pause#k settles only while it awaits something), so a push outside that order
  // could make a replay of the child diverge: the child learns it from its next reply
  // (docs/control.md, "Pause and resume").
  reason: 'on Restate a pause is not pushed to a child with no request in flight (docs/control.md)',
  tests: [PAUSE_BETWEEN_STEPS],
}], { index: 1, of: 2 });
