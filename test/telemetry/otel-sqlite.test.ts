import { tracingScenarios } from './tracing.ts';

tracingScenarios('sqlite');
