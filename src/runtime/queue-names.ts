// The queues an engine's workflows declare, by name: one name, one set of limits. Two
// workflows share a queue by declaring it with the same limits; other limits under a known
// name are a conflict (code workflows: the engine does not start; a workflow file: that file
// alone is not registered, registry.ts).
import type { QueueLimits, QueueSpec } from '../domain/rate-limit.ts';
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import { runFlowSpecs } from './run-flow-specs.ts';

export interface QueueConflict {
  queue: string;
  /** The workflow that defined the name first, and its limits. */
  by: string;
  known: QueueLimits;
  /** The limits the newcomer gives it. */
  other: QueueLimits;
}

const sameLimits = (a: QueueLimits, b: QueueLimits) => JSON.stringify(a) === JSON.stringify(b);

/** Every queue a workflow uses: its step queues, its runs' queue, its internal run-flow ones. */
const queuesOf = (d: WorkflowDefinition): QueueSpec[] => [...(d.queues ?? []), ...(d.runs?.queue ? [d.runs.queue] : []), ...runFlowSpecs(d)];

export class QueueNames {
  private readonly byName = new Map<string, { spec: QueueSpec; by: string }>();

  /** The first queue of `d` a known name defines with other limits; undefined if none. */
  conflict(d: WorkflowDefinition): QueueConflict | undefined {
    for (const q of queuesOf(d)) {
      const known = this.byName.get(q.name);
      if (known && !sameLimits(known.spec.limits, q.limits)) return { queue: q.name, by: known.by, known: known.spec.limits, other: q.limits };
    }
    return undefined;
  }

  /** Adds `d`'s queues (names already known keep their first definition). */
  add(d: WorkflowDefinition): void {
    for (const q of queuesOf(d)) if (!this.byName.has(q.name)) this.byName.set(q.name, { spec: q, by: d.name });
  }

  specs(): QueueSpec[] {
    return [...this.byName.values()].map((v) => v.spec);
  }
}
