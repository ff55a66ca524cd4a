// The child-run calls of workflow code (docs/children.md), built only on the journaled steps
// every backend already has, so SQLite, Restate and any later log get them the same way:
// - step.start = a `do` step whose body starts the child through the log (StepLog.startChild)
//   with a run id derived from this run and the step (domain/child-id.ts, by the log). Starting a run
//   with a given id is idempotent, so a crash between the child's start and the step's record
//   re-runs the body and finds the same child: exactly one child per call.
// - step.result = a waitForEvent on the internal signal the backend sends this run when the
//   child ends (`child:<id>`): the run suspends while it waits, holding no process memory, and
//   a replay hands back the recorded end.
//   The child's end is sent once, so a second step.result of the same child (in sequence or in
//   parallel) takes the end the first wait took instead of waiting for another: one wait per
//   child per session, shared (a Temporal child handle's result() awaited again does the same).
// - step.invoke = start, then result. ctx.signal = a `do` step that sends the signal once.
import { parseDuration } from '../domain/duration.ts';
import { childEnd, childSignal, isChildEnd, PARENT_CANCEL_POLICIES, type ChildEnd } from '../domain/child-runs.ts';
import { ChildRunError, NotSupportedError, TerminalError, TimeoutError, UnknownRunError, UnknownWorkflowError, ValidationError, RunStateError, fromErrorInfo } from '../domain/errors.ts';
import { roundTrip, type Json } from '../domain/json.ts';
import { boundedBody, type StepLog } from '../ports/step-log.ts';
import type { ChildWorkflow, InvokeOptions, StartChildOptions, StepApi, WorkflowContext } from '../../sdk/types.ts';
import type { BaseStepApi } from './step-api.ts';

const RUN_ID = /^[A-Za-z0-9_.:\-]{1,200}$/;
const reject = (message: string) => Promise.reject(new ValidationError(message));

/** `base` with step.invoke, step.start and step.result over `log`. */
export function withChildSteps(base: BaseStepApi, log: StepLog): StepApi {
  const api = base as StepApi;
  const ends = new ChildEnds(base);
  api.start = (name, child, input, options) => startChild(base, log, 'start', name, child, input, options);
  api.result = <O>(id: string, options?: { timeout?: InvokeOptions['timeout'] }) => awaitChild<O>(ends, 'result', id, options?.timeout);
  api.invoke = async <O>(name: string, child: ChildWorkflow, input?: unknown, options?: InvokeOptions): Promise<O> => {
    const { timeout, ...startOptions } = options ?? {};
    const timeoutOk = checkTimeout(`step.invoke('${String(name)}')`, timeout);
    if (typeof timeoutOk === 'string') return reject(timeoutOk);
    const id = await startChild(base, log, 'invoke', name, child, input, startOptions);
    return awaitChild<O>(ends, 'invoke', id, timeout);
  };
  return api;
}

/** ctx.signal over `step`: one journaled `do` step per call, named `signal:<name>:<runId>`. */
export function signalStep(step: BaseStepApi, log: StepLog): WorkflowContext['signal'] {
  return async (runId, name, payload) => {
    const what = `ctx.signal('${String(runId)}', '${String(name)}')`;
    if (typeof runId !== 'string' || !RUN_ID.test(runId)) return reject(`${what}: run id must be 1-200 letters, digits or _ . : -`);
    if (typeof name !== 'string' || name.length === 0 || name.length > 200 || name.includes('#')) return reject(`${what}: signal name must be 1-200 characters without '#'`);
    let data: Json;
    try {
      data = roundTrip(payload ?? null, `${what} payload`) as Json;
    } catch (err) {
      return reject((err as Error).message);
    }
    if (!log.sendSignal) return Promise.reject(new NotSupportedError(`${what}: signals between runs are not available here yet (docs/children.md)`));
    const send = log.sendSignal.bind(log);
    await step.do(`signal:${name}:${runId}`, boundedBody(async () => {
      try {
        await send(runId, name, data);
      } catch (err) {
        // The target finished or does not exist: sending again cannot help.
        if (err instanceof RunStateError || err instanceof UnknownRunError || err instanceof ValidationError) throw new TerminalError(`${what}: ${(err as Error).message}`);
        throw err;
      }
    }));
  };
}

function checkTimeout(what: string, timeout: unknown): number | string | undefined {
  if (timeout === undefined) return undefined;
  try {
    return parseDuration(timeout as never, `${what} timeout`);
  } catch (err) {
    return (err as Error).message;
  }
}

function startChild(
  step: BaseStepApi, log: StepLog, call: 'start' | 'invoke', name: string, child: ChildWorkflow, input: unknown, options: StartChildOptions | undefined,
): Promise<string> {
  const what = `step.${call}('${String(name)}')`;
  const workflow = typeof child === 'string' ? child : typeof child === 'object' && child !== null && typeof child.name === 'string' ? child.name : undefined;
  if (!workflow) return reject(`${what}: the child must be a workflow definition or a registered workflow name`);
  const o = options ?? {};
  if (typeof o !== 'object') return reject(`${what}: options must be an object`);
  for (const k of Object.keys(o)) if (k !== 'runId' && k !== 'onParentCancel') return reject(`${what}: unknown option '${k}' (runId, onParentCancel${call === 'invoke' ? ', timeout' : ''})`);
  if (o.runId !== undefined && (typeof o.runId !== 'string' || !RUN_ID.test(o.runId))) return reject(`${what}: runId must be 1-200 letters, digits or _ . : -`);
  const policy = o.onParentCancel ?? 'cancel';
  if (!PARENT_CANCEL_POLICIES.includes(policy)) return reject(`${what}: onParentCancel must be 'cancel' or 'abandon'`);
  let data: Json;
  try {
    data = roundTrip((input ?? null) as Json, `${what} input`) as Json;
  } catch (err) {
    return reject((err as Error).message);
  }
  if (!log.startChild) return Promise.reject(new NotSupportedError(`${what}: child runs are not available here yet (docs/children.md)`));
  const start = log.startChild.bind(log);
  const parentRunId = log.runId;
  return step.do(name, boundedBody(async ({ idempotencyKey }: { idempotencyKey: string }) => {
    // The step's unique name (`pay`, `pay#2`): the key is `<runId>/<unique name>`.
    const stepName = idempotencyKey.slice(parentRunId.length + 1);
    try {
      const started = await start({ workflow, input: data, ...(o.runId === undefined ? {} : { runId: o.runId }), parent: { runId: parentRunId, step: stepName, onParentCancel: policy } });
      return started.runId;
    } catch (err) {
      // Refused (unknown workflow, a cycle, too deep, an id taken by another run): a retry
      // would be refused the same way.
      if (err instanceof ValidationError || err instanceof UnknownWorkflowError || err instanceof RunStateError) throw new TerminalError(`${what}: ${(err as Error).message}`);
      throw err;
    }
  })) as Promise<string>;
}

/** The waits for child ends of one session, one per child: a wait that took (or is taking)
 *  a child's end serves every later call for that child; a wait that timed out took nothing
 *  and is forgotten, so the next call waits anew. Replays rebuild the same map, since the
 *  code makes the same calls in the same order. */
class ChildEnds {
  private readonly waits = new Map<string, { wait: Promise<unknown>; took: boolean }>();
  constructor(private readonly step: BaseStepApi) {}

  async take(call: string, id: string, timeout: InvokeOptions['timeout']): Promise<unknown> {
    for (;;) {
      const shared = this.waits.get(id);
      if (!shared) {
        const own = { wait: this.step.waitForEvent(childSignal(id), timeout === undefined ? undefined : { timeout }), took: false };
        this.waits.set(id, own);
        // Registered before the caller's handlers: a caller that retries after a timeout finds it gone.
        own.wait.then(() => (own.took = true), () => this.waits.get(id) === own && this.waits.delete(id));
        return own.wait;
      }
      // Another call's wait, still waiting, without our deadline: a timer of ours would be a
      // second journaled step racing it, so this one case is refused (docs/children.md).
      if (timeout !== undefined && !shared.took) {
        throw new ValidationError(`step.${call}('${id}', { timeout }): another step.result of this child is still waiting; await that one, or give the concurrent waits no timeout`);
      }
      try {
        return await shared.wait;
      } catch (err) {
        // That call's own deadline passed: its wait took nothing, so wait again.
        if (err instanceof TimeoutError) continue;
        throw err;
      }
    }
  }
}

async function awaitChild<O>(ends: ChildEnds, call: 'result' | 'invoke', id: string, timeout: InvokeOptions['timeout']): Promise<O> {
  if (typeof id !== 'string' || !RUN_ID.test(id)) throw new ValidationError(`step.${call}: child run id must be 1-200 letters, digits or _ . : -`);
  let end: unknown;
  try {
    end = await ends.take(call, id, timeout);
  } catch (err) {
    if (err instanceof TimeoutError) throw new TimeoutError(`child run ${id} did not finish within ${timeoutText(timeout)}`);
    throw err;
  }
  // A signal of that name sent by hand (engine.signal) is taken as the child's end too.
  const e: ChildEnd = isChildEnd(end) ? end : childEnd(id, 'succeeded', { output: end as Json });
  if (e.status === 'succeeded') return e.output as O;
  const workflow = e.workflow === undefined ? '' : ` of workflow '${e.workflow}'`;
  const cause = e.status === 'failed' ? e.error : { name: 'CancelledError', message: `run ${id} was cancelled` };
  const err = new ChildRunError(`child run ${id}${workflow} ${e.status === 'failed' ? `failed: ${cause.name}: ${cause.message}` : 'was cancelled'}`);
  Object.assign(err, { childRunId: id, status: e.status, ...(e.workflow === undefined ? {} : { workflow: e.workflow }) });
  Object.defineProperty(err, 'cause', { value: fromErrorInfo(cause), enumerable: false, writable: true, configurable: true });
  throw err;
}

function timeoutText(timeout: unknown): string {
  return typeof timeout === 'number' ? `${timeout}ms` : String(timeout);
}
