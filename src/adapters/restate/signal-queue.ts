// The signal queue of one (run, signal name) on Restate: a virtual object keyed
// `<runId>/<name>` whose exclusive `deliver` handler hands out the next slot number from its
// state, then has the run's shared `signal` handler resolve the durable promise
// `evt:<name>#<slot>` that slot's wait reads (step-log.ts). Restate runs one `deliver` per key
// at a time, in arrival order, so concurrent signals of a name each get their own slot, in a
// stable order, and none is lost; delivering the k-th signal costs what the first did (the
// old handler probed slots 1..k to find a free one: ~0.1 s per signal more at k = 300).
//
// The counter is a cache of "how many slots are taken": when it is absent (a run from before
// this queue existed, or a key whose state expired after a week without signals) the `signal`
// handler probes for the first free slot once and the counter goes on from there. The state
// is dropped by a delayed `expire` call after IDLE_MS without a signal, so finished runs
// leave nothing behind in Restate.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import type { Json } from '../../domain/json.ts';

/** What engine.signal() sends to `deliver`. */
export interface DeliverRequest {
  runId: string;
  name: string;
  payload: Json;
}

/** What `deliver` asks of the run's shared `signal` handler; `slot` absent = the counter is
 *  unknown: slot 1, or the first free slot after it. */
export interface SlotRequest {
  name: string;
  payload: Json;
  t?: number;
  slot?: number;
}

/** One queue object per workflow, next to its `tq_<x>` workflow: `tqsig_<x>`. Not `tq_`, so
 *  no workflow's service name can equal it and run listings (`tq_` prefix) never see it. */
export function signalQueueName(workflowService: string): string {
  return `tqsig_${workflowService.slice(3)}`;
}

/** Run ids never contain `/` (letters, digits and `_ . : -`), so the key splits unambiguously. */
export const signalQueueKey = (runId: string, name: string): string => `${runId}/${name}`;

export const SIGNAL_QUEUE_IDLE_MS = 7 * 86_400_000;

const json = restate.serde.json;

export function buildSignalQueue(workflowService: string) {
  const name = signalQueueName(workflowService);
  return restate.object({
    name,
    handlers: {
      deliver: async (ctx: restate.ObjectContext, req: DeliverRequest): Promise<{ slot: number }> => {
        if (!req || typeof req.name !== 'string' || typeof req.runId !== 'string' || ctx.key !== signalQueueKey(req.runId, req.name)) {
          throw new restate.TerminalError(`signal queue ${ctx.key}: request names another run or signal`, { errorCode: 400 });
        }
        const next = await ctx.get<number>('next');
        const t = await ctx.date.now();
        const parameter: SlotRequest = { name: req.name, payload: req.payload ?? null, t, ...(next !== null ? { slot: next } : {}) };
        // A finished run answers with a TerminalError (409): it propagates, the counter stays.
        const { slot } = await ctx.genericCall<SlotRequest, { slot: number }>({
          service: workflowService, method: 'signal', key: req.runId, parameter, inputSerde: json, outputSerde: json,
        });
        ctx.set('next', slot + 1);
        ctx.set('at', t);
        if (next === null) expireLater(ctx, name, SIGNAL_QUEUE_IDLE_MS);
        return { slot };
      },

      expire: async (ctx: restate.ObjectContext): Promise<void> => {
        const at = await ctx.get<number>('at');
        if (at === null) return;
        const left = at + SIGNAL_QUEUE_IDLE_MS - (await ctx.date.now());
        if (left > 0) return expireLater(ctx, name, left);
        ctx.clearAll();
      },
    },
    options: {
      retryPolicy: { initialInterval: 100, exponentiationFactor: 2, maxInterval: 2000, maxAttempts: 100_000, onMaxAttempts: 'pause' },
    },
  });
}

function expireLater(ctx: restate.ObjectContext, service: string, delay: number): void {
  ctx.genericSend({ service, method: 'expire', key: ctx.key, parameter: null, inputSerde: json, delay });
}
