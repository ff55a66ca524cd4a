// A step's slot of a queue on Restate (the StepLog's slot(), docs/flow-control.md): the run
// makes an awakeable, sends `acquire` with its id to the queue's object (queue-object.ts) and
// waits on it; the object resolves it when the slot is granted. The body's end sends
// `release`. Each is a journaled command of the run's invocation, so a replay (after a
// suspension, a crash, another replica taking over) neither asks again nor releases twice:
// the slot belongs to the run's durable invocation, not to the process running it, and a
// replica that dies while its body holds a slot leaves it to the invocation's next attempt,
// which runs the body again in that same slot and then releases it.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import { ValidationError } from '../../domain/errors.ts';
import type { QueueSpec } from '../../domain/rate-limit.ts';
import type { Json } from '../../domain/json.ts';
import { decodeValue } from '../../domain/value-codec.ts';
import { runKeyOf, runPriorityOf } from '../../../sdk/queue.ts';
import { runFlowKeysOf } from '../../../sdk/run-flow.ts';
import type { WorkflowDefinition } from '../../../sdk/workflow.ts';
import type { SlotHold, SlotRequest } from '../../ports/step-log.ts';
import type { RestateDriver } from './driver.ts';
import { QUEUE_OBJECT, type AcquireAnswer, type AcquireRequest, type Grant } from './queue-object.ts';
import { SlotRefused } from '../../domain/run-flow.ts';

const json = restate.serde.json;
const counted = (spec: QueueSpec): boolean => spec.limits.rate !== undefined || spec.limits.key?.rate !== undefined;

/** The queues an engine's workflows declare, by name; a definition passed to a step itself
 *  is taken as it is (the same name with other limits is refused). */
export class QueueCatalog {
  private readonly byName = new Map<string, QueueSpec>();

  constructor(specs: readonly QueueSpec[]) {
    for (const s of specs) this.byName.set(s.name, { name: s.name, limits: s.limits });
  }

  resolve(ref: QueueSpec | string): QueueSpec {
    if (typeof ref === 'string') {
      const q = this.byName.get(ref);
      if (!q) throw new ValidationError(`unknown queue '${ref}': declare it in the workflow's options (workflow(name, { queues: [queue('${ref}', {...})] }, ...)) or pass the queue itself`);
      return q;
    }
    const known = this.byName.get(ref.name);
    if (known && JSON.stringify(known.limits) !== JSON.stringify(ref.limits)) {
      throw new ValidationError(`queue '${ref.name}' is defined twice with different limits (${JSON.stringify(known.limits)} and ${JSON.stringify(ref.limits)}): define it once and share it`);
    }
    return known ?? { name: ref.name, limits: ref.limits };
  }
}

export interface SlotContext {
  rctx: restate.WorkflowContext;
  driver: RestateDriver;
  catalog: QueueCatalog;
  /** The engine is stopping: nothing more is sent (the invocation goes on elsewhere later,
   *  and its replay must meet the same commands), and a waiter keeps its place. */
  stopping(): boolean;
  /** Moves the run's clock to the grant's time. */
  advance(t: number): void;
}

/** Waits for a slot of `req.queue` (rejects when `signal` aborts first: the run then leaves
 *  the line, or gives back a slot granted meanwhile, before the rejection). */
export function restateSlot(c: SlotContext, req: SlotRequest, signal: AbortSignal): Promise<SlotHold> {
  let spec: QueueSpec;
  try {
    spec = c.catalog.resolve(req.queue);
  } catch (err) {
    return Promise.reject(err);
  }
  if (signal.aborted) return Promise.reject(signal.reason);
  const { id, promise } = c.rctx.awakeable<Grant>();
  const ask: AcquireRequest = { id, runId: req.runId, step: req.step, key: req.key, limits: spec.limits, ...(req.priority ? { priority: req.priority } : {}), ...(req.noWait ? { noWait: true as const } : {}) };
  const whenQueued = req.whenQueued;
  if (whenQueued) {
    // A call, not a send: its answer (journaled) says whether the ask waits, and for whom.
    const asked = c.rctx.genericCall<AcquireRequest, AcquireAnswer>({ service: QUEUE_OBJECT, method: 'acquire', key: spec.name, parameter: ask, inputSerde: json, outputSerde: json });
    const queued = c.driver.await(asked).then(async (answer) => {
      if (!answer.granted) await whenQueued(answer.others);
    });
    // Cancelled while it asked or while it cancelled the runs before it: it leaves the line
    // (else the ask stayed there, and once granted held the slot of a run that had ended).
    return queued.then(() => awaitGrant(c, spec, id, promise, signal), async (err: unknown) => {
      await leaveLine(c, spec, id);
      throw err;
    });
  }
  c.rctx.genericSend({ service: QUEUE_OBJECT, method: 'acquire', key: spec.name, parameter: ask, inputSerde: json });
  return awaitGrant(c, spec, id, promise, signal);
}

/** The ask `id` leaves the line of `spec` (or gives back the slot granted to it meanwhile).
 *  Awaited: once the run has ended, it is out of the line (`why` of the next agrees). Not
 *  while the engine stops: the invocation goes on elsewhere and must meet the same commands. */
async function leaveLine(c: SlotContext, spec: QueueSpec, id: string): Promise<void> {
  if (c.stopping()) return;
  const release = { service: QUEUE_OBJECT, method: 'release', key: spec.name, parameter: { id }, inputSerde: json };
  const left = c.rctx.genericCall<{ id: string }, { released: boolean }>({ ...release, outputSerde: json });
  await c.driver.await(left).catch(() => {
    // A second cancel of this run (a singleton burst cancels each run before it) cancels
    // the calls it has in flight, this one too (the SDK's implicit cancellation): the ask
    // stayed in line, and once granted held the slot until the lease audit. Sent again one
    // way, which no cancel stops (a second release of one ask is a no-op).
    c.rctx.genericSend(release);
  });
}

/** Waits on the ask's awakeable: its grant, or a refusal (noWait), or the signal's abort. */
function awaitGrant(c: SlotContext, spec: QueueSpec, id: string, promise: restate.RestatePromise<Grant>, signal: AbortSignal): Promise<SlotHold> {
  return new Promise<SlotHold>((resolve, reject) => {
    let settled = false;
    const leave = (reason: unknown): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      void leaveLine(c, spec, id).then(() => reject(reason));
    };
    const onAbort = (): void => leave(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    c.driver.await(promise).then(
      (g) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        c.advance(g.t);
        // A noWait ask the limits did not allow: it has left the line already.
        if (g.refused) return reject(new SlotRefused(g.refused));
        // The body begins now: a rate limit counts its start from now, not from the grant
        // (queue-object.ts, `started`). Journaled, so a replay does not send it again. Only
        // by runs started by this release or later (their request says `driver: 1`, as the
        // eager driver's): an older run's journal has no such send, and its replay would
        // not meet it; the object counts its start when it leaves instead (conservative).
        if (counted(spec) && c.driver.eager && !c.stopping()) {
          c.rctx.genericSend({ service: QUEUE_OBJECT, method: 'started', key: spec.name, parameter: { id }, inputSerde: json });
        }
        let released = false;
        const release = (): void => {
          if (released || c.stopping()) return;
          released = true;
          c.rctx.genericSend({ service: QUEUE_OBJECT, method: 'release', key: spec.name, parameter: { id }, inputSerde: json });
        };
        resolve({
          grantedAt: g.t,
          release,
          // A call, awaited: the run's end is written after the object freed the slot. Only in
          // runs started by this release (`driver: 1`): an older journal has a send here.
          releaseAwaited: async () => {
            if (released || c.stopping() || !c.driver.eager) return release();
            released = true;
            await leaveLine(c, spec, id);
          },
        });
      },
      // A cancel Restate delivered to the wait itself.
      (err: unknown) => leave(err),
    );
  });
}

/** Run-level flow control: a key or priority function that throws or gives a bad value is
 *  refused when the run is asked for, with nothing stored (as on SQLite); a run made by an
 *  event or a schedule fails with it instead (run-slot.ts). */
export function refuseBadRunKey(def: WorkflowDefinition, input: Json): void {
  if (!def.runs) return;
  const value = decodeValue(input); // as the run's code sees it (undefined, Date, Map...)
  runKeyOf(def.name, def.runs, value);
  runPriorityOf(def.name, def.runs, value);
  runFlowKeysOf(def.name, def.runs, value);
}
