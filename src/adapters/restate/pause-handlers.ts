// The shared handlers `pause` and `resume` of a run's workflow on Restate (docs/control.md,
// run-pause.ts): each resolves a durable promise of the run's current pause cycle. They
// refuse (409, TerminalError) what the run cannot do, with the one-line messages the SQLite
// backend gives.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import { MAX_CANCEL_BY } from '../../domain/cancel.ts';
import { isTerminal, type RunStatus } from '../../domain/run-status.ts';
import { describeIssue } from '../../domain/validate.ts';
import type { RunMeta, RunState } from './run-handler.ts';
import { CANCEL_CYCLE, cancelCycleNow, cancelPromise, continuePromise, type ContinueRequest } from './run-continue.ts';
import { PAUSE_CYCLE, pausePromise, resumePromise, type PauseNote, type ResumeNote } from './run-pause.ts';

/** The `pause` handler's body: who asks (the engine validated it). */
const pauseBody = z.object({
  by: z.string().min(1).max(MAX_CANCEL_BY),
  // From the workflow's pause (workflow-pause-object.ts): the run is held, as of the
  // workflow's pause time.
  held: z.literal(true).optional(),
  t: z.number().int().nonnegative().optional(),
}).strict();

/** The `resume` handler's body: `skip` (a reason) ends a held run skipped (workflows.resume
 *  with held: 'skip'); `held`: only a run held by its workflow's pause is resumed. */
const resumeBody = z.object({ skip: z.string().min(1).max(500).optional(), held: z.literal(true).optional() }).strict();

const refuse = (message: string) => new restate.TerminalError(message, { errorCode: 409 });

/** A run started by an engine from before run control keeps its journal's shape: no watch. */
const OLD_RUN = (runId: string, what: string) =>
  `run ${runId} was started by an engine from before runs.pause on Restate; it cannot be ${what} (it can be cancelled, and rerun)`;

/** The cycle a pause or resume asked now belongs to: the run handler's, or past it while the
 *  run has not yet taken a resume (only the run handler writes state). */
async function cycleNow(ctx: restate.WorkflowSharedContext): Promise<number> {
  let k = (await ctx.get<number>(PAUSE_CYCLE)) ?? 0;
  while ((await ctx.promise<ResumeNote>(resumePromise(k)).peek()) !== undefined) k++;
  return k;
}

/** Notes a pause (the first asker of a cycle stays): the run holds at its next step boundary
 *  or wake. A run not yet started pauses before its first step. */
export async function pauseRun(ctx: restate.WorkflowSharedContext, body: unknown): Promise<{ noted: boolean }> {
  const req = pauseBody.safeParse(body ?? {});
  if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'pause request'), { errorCode: 400 });
  const run = await ctx.get<RunState>('~run');
  if (run && isTerminal(run.status as RunStatus)) throw refuse(`run ${ctx.key} already finished (${run.status}); nothing to pause`);
  if (run && !(await ctx.get<RunMeta>('~meta'))?.control) throw refuse(OLD_RUN(ctx.key, 'paused'));
  if (run?.status === 'blocked') throw refuse(`run ${ctx.key} is blocked (it waits for an approval and runs nothing): nothing to pause`);
  if ((await ctx.promise(cancelPromise(await cancelCycleNow(ctx))).peek()) !== undefined) throw refuse(`run ${ctx.key} is being cancelled; it cannot be paused`);
  const p = ctx.promise<PauseNote>(pausePromise(await cycleNow(ctx)));
  if ((await p.peek()) !== undefined) return { noted: false };
  try {
    await p.resolve({ by: req.data.by, t: req.data.t ?? (await ctx.date.now()), ...(req.data.held ? { held: true } : {}) });
  } catch (err) {
    if (err instanceof restate.TerminalError) return { noted: false }; // a concurrent pause noted first
    throw err;
  }
  return { noted: true };
}

/** Lets a paused run go on (or withdraws a pause asked and not yet applied); continues a run
 *  parked cancelled (run-continue.ts; the engine checked that its invocation is alive). */
export async function resumeRun(ctx: restate.WorkflowSharedContext, body?: unknown): Promise<{ resumed: 'paused' | 'cancelled' }> {
  const req = resumeBody.safeParse(body ?? {});
  if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'resume request'), { errorCode: 400 });
  const run = await ctx.get<RunState>('~run');
  if (req.data.held) return resumeHeld(ctx, run, req.data.skip);
  if (run && !(await ctx.get<RunMeta>('~meta'))?.control) throw refuse(OLD_RUN(ctx.key, 'resumed'));
  if (run?.status === 'cancelled') {
    const c = (await ctx.get<number>(CANCEL_CYCLE)) ?? 0;
    try {
      await ctx.promise<ContinueRequest>(continuePromise(c)).resolve({ t: await ctx.date.now() });
    } catch (err) {
      if (!(err instanceof restate.TerminalError)) throw err; // a concurrent resume did it
    }
    return { resumed: 'cancelled' };
  }
  const k = await cycleNow(ctx);
  const asked = await ctx.promise<PauseNote>(pausePromise(k)).peek();
  if (asked === undefined || (run && isTerminal(run.status as RunStatus))) {
    throw refuse(`run ${ctx.key} is ${run?.status ?? 'pending'}; only a paused or a cancelled run can be resumed`);
  }
  try {
    await ctx.promise<ResumeNote>(resumePromise(k)).resolve({ t: await ctx.date.now() });
  } catch (err) {
    if (!(err instanceof restate.TerminalError)) throw err; // a concurrent resume did it
  }
  return { resumed: 'paused' };
}

/** workflows.resume: a run its workflow's pause held (its cycle-0 pause, noted by the
 *  workflow's object) goes on, or ends skipped. Anything else is refused (409): a run resumed
 *  on its own meanwhile, or cancelled. */
async function resumeHeld(ctx: restate.WorkflowSharedContext, run: RunState | null | undefined, skip: string | undefined): Promise<{ resumed: 'paused' }> {
  const asked = await ctx.promise<PauseNote>(pausePromise(0)).peek();
  const done = await ctx.promise<ResumeNote>(resumePromise(0)).peek();
  if (!asked?.held || done !== undefined || (run && isTerminal(run.status as RunStatus))) {
    throw refuse(`run ${ctx.key} is not held by its workflow's pause`);
  }
  try {
    await ctx.promise<ResumeNote>(resumePromise(0)).resolve({ t: await ctx.date.now(), ...(skip !== undefined ? { skip } : {}) });
  } catch (err) {
    if (!(err instanceof restate.TerminalError)) throw err; // a concurrent resume did it
  }
  return { resumed: 'paused' };
}
