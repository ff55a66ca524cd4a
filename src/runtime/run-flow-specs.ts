// The queues a workflow's `runs.singleton` and `runs.rateLimit` use (src/domain/run-flow.ts),
// declared with the workflows' own queues so the backends know them at start (SQLite recovers
// their slots and counted starts from its file).
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import { ratePeriodMs } from '../../sdk/run-flow.ts';
import type { QueueSpec } from '../domain/rate-limit.ts';
import { rateQueue, singletonQueue } from '../domain/run-flow.ts';

export function runFlowSpecs(def: WorkflowDefinition): QueueSpec[] {
  const runs = def.runs;
  if (!runs) return [];
  return [
    ...(runs.singleton ? [singletonQueue(def.name)] : []),
    ...(runs.rateLimit ? [rateQueue(def.name, runs.rateLimit.limit, ratePeriodMs(runs.rateLimit))] : []),
  ];
}
