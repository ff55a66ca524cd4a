// Resume of a cancelled run on Restate (docs/control.md, "Resume of a cancelled run"). A run
// whose code ended cancelled does not end its invocation: the handler shows `cancelled` and
// parks on `~continue#c` (c: the run's cancel cycle), as a failed run parks on `~retry#n`.
// runs.resume resolves it; the handler cuts its journal at the step the cancel was thrown
// into (domain resumePlan) and goes on. The park ends the invocation (cancelled, for good)
// after PARK_TTL or at a further cancel from Restate. Each cycle has its own cancel note
// (`~cancel` for the first, `~cancel#c` after), so a later cancel names its own asker.
import './polyfill.ts';
import type * as restate from '@restatedev/restate-sdk';

/** Workflow state: the run's cancel cycle (absent: 0); written by the run handler only. */
export const CANCEL_CYCLE = '~cancelc';

/** The durable promise the engine resolves with who asks to cancel, in cancel cycle `c`. */
export const cancelPromise = (c: number): string => (c === 0 ? '~cancel' : `~cancel#${c}`);

/** The durable promise runs.resume resolves to continue a run parked cancelled in cycle `c`. */
export const continuePromise = (c: number): string => `~continue#${c}`;

/** What `~continue#c` holds: when the resume was asked (the run's clock moves to it). */
export interface ContinueRequest {
  t: number;
}

/** The cancel cycle now, for a shared handler: the run handler's, or past it while the run
 *  has not yet taken a resume of its cancel. */
export async function cancelCycleNow(ctx: restate.WorkflowSharedContext): Promise<number> {
  let c = (await ctx.get<number>(CANCEL_CYCLE)) ?? 0;
  while ((await ctx.promise<ContinueRequest>(continuePromise(c)).peek()) !== undefined) c++;
  return c;
}
