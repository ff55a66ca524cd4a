// Publishing an event, over the TriggerStore port, inside the caller's write: the event is
// recorded once (its id dedups: a second publish returns the first one's runs) and starts one
// run per subscribing workflow, with the deterministic id eventRunId(event, workflow), so a
// retried publish can never start a run twice. Both backends publish through this.
import { eventRunId } from '../domain/ids.ts';
import type { EmitRequest } from '../ports/executor.ts';
import type { OutboxRun, TriggerWrites } from '../ports/trigger-store.ts';
import type { WorkflowRegistry } from './registry.ts';
import { deadlineFor } from '../domain/run-control.ts';

export interface Published {
  runIds: string[];
  duplicate: boolean;
  /** The runs this publish created (the caller starts them). */
  created: OutboxRun[];
}

export function publishEvent(w: TriggerWrites, registry: WorkflowRegistry, req: EmitRequest, now: number): Published {
  const existing = w.eventRunIds(req.id);
  if (existing) return { runIds: existing, duplicate: true, created: [] };
  const created: OutboxRun[] = [];
  const runIds = registry.subscribers(req.name).map((workflow) => {
    const wf = registry.get(workflow);
    const run: OutboxRun = { runId: eventRunId(req.id, workflow), workflow, version: wf.version, input: req.payload, traceparent: req.traceparent, deadlineAt: deadlineFor(now, wf.definition.timeoutMs) };
    if (w.insertRun(run, now)) created.push(run);
    return run.runId;
  });
  w.insertEvent({ id: req.id, name: req.name, payload: req.payload, runIds, now });
  return { runIds, duplicate: false, created };
}
