// Publishing an event, over the TriggerStore port, inside the caller's write: the event is
// recorded once (its id dedups: a second publish returns the first one's runs) and starts one
// run per subscribing workflow, with the deterministic id eventRunId(event, workflow), so a
// retried publish can never start a run twice. Both backends publish through this.
import { eventRunId } from '../domain/ids.ts';
import type { EmitRequest } from '../ports/executor.ts';
import type { OutboxRun, TriggerWrites } from '../ports/trigger-store.ts';
import type { WorkflowRegistry } from './registry.ts';
import { deadlineFor } from '../domain/run-control.ts';
import type { Debouncer } from '../ports/debounce.ts';
import { joinBurstInWrite } from './debounce.ts';

export interface Published {
  runIds: string[];
  duplicate: boolean;
  /** The runs this publish created (the caller starts them). */
  created: OutboxRun[];
}

/** A debounced subscriber (docs/flow-control.md, Debounce) gets no run of its own: the event
 *  joins its key's burst through `bursts`, once (the event id dedups before anything else;
 *  the burst's dedup id is the run id the event would have had). The event's `runIds` name
 *  the runs it started itself, not a burst's (which starts later, maybe with another input). */
export function publishEvent(w: TriggerWrites, registry: WorkflowRegistry, req: EmitRequest, now: number, bursts?: Debouncer): Published {
  const existing = w.eventRunIds(req.id);
  if (existing) return { runIds: existing, duplicate: true, created: [] };
  const created: OutboxRun[] = [];
  const runIds = registry.subscribers(req.name).flatMap((workflow) => {
    const wf = registry.get(workflow);
    const d = wf.definition.debounce;
    if (d) {
      const id = eventRunId(req.id, workflow);
      joinBurstInWrite(bursts, w, { workflow, spec: d, input: req.payload, dedupId: id, traceparent: req.traceparent, what: `event '${req.name}' (id ${req.id})` }, now);
      return [];
    }
    const run: OutboxRun = { runId: eventRunId(req.id, workflow), workflow, version: wf.version, input: req.payload, traceparent: req.traceparent, deadlineAt: deadlineFor(now, wf.definition.timeoutMs) };
    if (w.insertRun(run, now)) created.push(run);
    return [run.runId];
  });
  w.insertEvent({ id: req.id, name: req.name, payload: req.payload, runIds, now });
  return { runIds, duplicate: false, created };
}
