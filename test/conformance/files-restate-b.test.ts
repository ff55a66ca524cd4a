import { runFileConformance } from './files/suite.ts';
import { PAUSE_BETWEEN_STEPS } from './files/control-runs.ts';

// The other half of files-restate-a.test.ts's suite (see there).
runFileConformance('restate', [{
  // Restate learns a pause in its journal's order (the run handler's watch of the durable
  // promise ~pause#k settles only while it awaits something), so a push outside that order
  // could make a replay of the child diverge: the child learns it from its next reply
  // (docs/control.md, "Pause and resume").
  reason: 'on Restate a pause is not pushed to a child with no request in flight (docs/control.md)',
  tests: [PAUSE_BETWEEN_STEPS],
}], { index: 2, of: 2 });
