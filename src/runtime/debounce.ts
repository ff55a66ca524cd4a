// The engine's side of run-level debounce (docs/flow-control.md, Debounce): a trigger of a
// debounced workflow joins (or opens) its key's pending burst instead of starting a run, and
// result() on the burst's run id waits for the run the burst becomes.
import { debounceKeyOf, type DebounceSpec } from '../../sdk/debounce.ts';
import { runKeyOf, runPriorityOf } from '../../sdk/queue.ts';
import { runFlowKeysOf, type RunOptions } from '../../sdk/run-flow.ts';
import { NotSupportedError, TimeoutError, UnknownRunError, ValidationError } from '../domain/errors.ts';
import type { Json } from '../domain/json.ts';
import type { DurableExecutor } from '../ports/executor.ts';
import type { RunView } from '../domain/run-view.ts';
import { decodeValue } from '../domain/value-codec.ts';
import { hookRunId } from '../domain/ids.ts';
import type { Debouncer } from '../ports/debounce.ts';
import type { TriggerWrites } from '../ports/trigger-store.ts';

/** What engine.trigger returns for a debounced workflow. */
export interface DebouncedStart {
  /** The run the burst becomes: the same id for every trigger of the burst. */
  runId: string;
  /** This trigger opened the burst. */
  created: boolean;
  /** When the burst's run starts unless another trigger joins it (ISO). */
  debouncedUntil: string;
}

/** How often result() looks whether a burst's run exists yet. */
const POLL_MS = 50;

export async function debouncedTrigger(
  executor: DurableExecutor,
  workflow: string,
  spec: DebounceSpec,
  runs: RunOptions | undefined,
  value: unknown,
  input: Json,
  opts: { runId?: string; timeout?: unknown },
  newId: () => string,
  traceparent: string | undefined,
): Promise<DebouncedStart> {
  // The burst picks its run's id (its first trigger's); a caller's id or deadline would apply
  // to one trigger of many.
  if (opts.runId !== undefined) throw new ValidationError(`trigger option runId: workflow '${workflow}' is debounced (option debounce): the burst's run id is the one its first trigger returned`);
  if (opts.timeout !== undefined) throw new ValidationError(`trigger option timeout: workflow '${workflow}' is debounced (option debounce): use the workflow's timeout option`);
  const key = debounceKeyOf(workflow, spec, value); // throws, nothing stored
  // The run's own queue key and priority too: a bad one found only when the burst fires
  // would lose the burst.
  if (runs) {
    if (runs.queue) {
      runKeyOf(workflow, runs, value);
      runPriorityOf(workflow, runs, value);
    }
    runFlowKeysOf(workflow, runs, value);
  }
  if (!executor.debouncer) throw new NotSupportedError(`workflow '${workflow}' is debounced, which the ${executor.backend} backend does not support`);
  const r = await executor.debouncer.debounce({ workflow, key, input, periodMs: spec.periodMs, ...(spec.maxWaitMs !== undefined ? { maxWaitMs: spec.maxWaitMs } : {}), runId: newId(), ...(traceparent ? { traceparent } : {}) });
  return { runId: r.runId, created: r.created, debouncedUntil: new Date(r.dueAt).toISOString() };
}

/** waitForTerminal, also for the run of a burst not started yet (it waits for it to start). */
export async function waitForRun(executor: DurableExecutor, runId: string, timeoutMs: number): Promise<RunView> {
  try {
    return await executor.waitForTerminal(runId, timeoutMs);
  } catch (err) {
    // Only an unknown run can be a burst's; the debouncer is asked only then (it refuses an
    // engine that is not started, and a stop's error must stay the stop's).
    if (!(err instanceof UnknownRunError)) throw err;
    const d = executor.debouncer;
    if (!d) throw err;
    const deadline = Date.now() + timeoutMs;
    while (!(await executor.getRun(runId))) {
      if (!(await d.debouncing(runId))) throw err;
      if (Date.now() >= deadline) throw new TimeoutError(`run ${runId} did not finish within ${timeoutMs}ms (its debounce burst has not started it yet)`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return executor.waitForTerminal(runId, Math.max(0, deadline - Date.now()));
  }
}

/** A trigger of an event or a schedule slot for a debounced workflow, inside the trigger
 *  store's write: joins its burst (once per `dedupId`, which is also the run id it gives a
 *  burst it opens). Returns why it could not join (a key function that throws: one line,
 *  logged), or undefined. The key was checked before the write where that could refuse it
 *  (engine.emit, ctx.emit); a schedule slot records the reason as its fate. */
export function joinBurstInWrite(
  bursts: Debouncer | undefined,
  w: TriggerWrites,
  t: { workflow: string; spec: DebounceSpec; input: Json; dedupId: string; traceparent?: string; what: string },
  now: number,
): string | undefined {
  let reason: string | undefined;
  if (!bursts) reason = `workflow '${t.workflow}' is debounced, which this engine does not do (a drain)`;
  else {
    try {
      const key = debounceKeyOf(t.workflow, t.spec, decodeValue(t.input));
      bursts.joinInWrite(w, { dedupId: t.dedupId, runId: t.dedupId, workflow: t.workflow, key, input: t.input, periodMs: t.spec.periodMs, ...(t.spec.maxWaitMs !== undefined ? { maxWaitMs: t.spec.maxWaitMs } : {}), ...(t.traceparent ? { traceparent: t.traceparent } : {}) }, now);
      return undefined;
    } catch (err) {
      reason = String((err as Error)?.message ?? err);
    }
  }
  console.error(`tranquil: ${t.what} did not join a debounce burst of '${t.workflow}': ${reason}`);
  return reason;
}

/** A webhook delivery to a debounced workflow joins its burst; its Idempotency-Key (as the
 *  run id an undebounced delivery would get) dedups: a redelivery changes nothing and
 *  answers with the burst it joined. The key was checked by the target's validate. */
export async function debouncedDelivery(
  executor: DurableExecutor,
  workflow: string,
  spec: DebounceSpec,
  input: Json,
  idempotencyKey: string | undefined,
  newId: () => string,
  traceparent: string | undefined,
): Promise<{ runId: string; created: boolean }> {
  const key = debounceKeyOf(workflow, spec, decodeValue(input));
  if (!executor.debouncer) throw new NotSupportedError(`workflow '${workflow}' is debounced, which the ${executor.backend} backend does not support`);
  const dedupId = idempotencyKey === undefined ? undefined : hookRunId(workflow, idempotencyKey);
  const r = await executor.debouncer.debounce({
    workflow, key, input, periodMs: spec.periodMs, ...(spec.maxWaitMs !== undefined ? { maxWaitMs: spec.maxWaitMs } : {}),
    runId: dedupId ?? newId(), ...(dedupId !== undefined ? { dedupId } : {}), ...(traceparent ? { traceparent } : {}),
  });
  return { runId: r.runId, created: r.created };
}
