// The body of a capability step (step.use): what RunSession runs inside the step log's
// `attempt`, exactly like a step.do body, so retries, timeout, abort signal, idempotency key
// and the result's JSON round-trip are step.do's. The provider call itself goes through the
// log (StepLog.capability): in-process on SQLite and Restate, through the engine from a Deno
// child. No eligible provider: the log answers CapabilityUnavailableError and the session
// parks the step instead of counting an attempt (isPark).
import { CAPABILITY_UNAVAILABLE, CapabilityUnavailableError, type Attrs } from '../domain/capability.ts';
import type { ErrorInfo } from '../domain/errors.ts';
import type { Json } from '../domain/json.ts';
import type { StepLog } from '../ports/step-log.ts';
import type { StepBody } from '../../sdk/types.ts';

export function capabilityBody(log: StepLog, capability: string, input: Json, affinity: Attrs): StepBody<Json | undefined> {
  return ({ attempt, idempotencyKey, signal }) => {
    if (!log.capability) return Promise.reject(new CapabilityUnavailableError(capability, affinity));
    // A fresh copy per attempt: a provider may mutate what it is handed.
    const req = { runId: log.runId, capability, affinity, input: structuredClone(input), idempotencyKey, attempt };
    return log.capability(req, signal);
  };
}

/** The attempt found no eligible provider: the step parks (not a failure, not an attempt). */
export function isPark(res: { ok: boolean; error?: ErrorInfo }): boolean {
  return !res.ok && res.error?.name === CAPABILITY_UNAVAILABLE;
}
