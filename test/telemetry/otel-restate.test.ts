import { logScenarios } from './logs.ts';
import { metricsScenarios } from './metrics.ts';
import { tracingScenarios } from './tracing.ts';

// A real restate-server (the pinned npm package) per test, started and stopped by the engine.
tracingScenarios('restate');
metricsScenarios('restate');
logScenarios('restate');
