import { logScenarios } from './logs.ts';
import { metricsScenarios } from './metrics.ts';
import { tracingScenarios } from './tracing.ts';

tracingScenarios('sqlite');
metricsScenarios('sqlite');
logScenarios('sqlite');
