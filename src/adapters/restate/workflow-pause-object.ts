// The pause of a whole workflow on Restate (docs/control.md, "Pause a workflow"): a virtual
// object keyed by workflow name, so every engine replica serving the same Restate sees one
// pause (cluster-wide). State: `paused` ({ by, t }) while paused, and `held`, the runs it held,
// in the order they were held. A run's handler asks it once, through journaled calls, before
// anything of its code runs (run-handler.ts workflowHold): `peek` (shared: no lock, the cost
// of a run start while nothing is paused) and, only when paused, `hold` (exclusive, so a run
// is either held and listed or let go, never lost to a concurrent resume). `hold` notes the
// run's pause through the run's own `pause` handler (pause-handlers.ts) before listing it, so
// the resume finds the pause to resolve; the run then waits on it as any paused run.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import { MAX_CANCEL_BY } from '../../domain/cancel.ts';
import { describeIssue } from '../../domain/validate.ts';
import { heldBy } from '../../domain/workflow-pause.ts';
import { serviceName } from './workflow-service.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const WORKFLOW_PAUSE_OBJECT = 'tqwfpause';

/** What `paused` holds: who paused the workflow, and when (epoch ms, the object's journaled time). */
export interface WorkflowPaused {
  by: string;
  t: number;
}

const pauseBody = z.object({ by: z.string().min(1).max(MAX_CANCEL_BY) }).strict();
const holdBody = z.object({ runId: z.string().min(1).max(200) }).strict();

const parsed = <T>(schema: z.ZodType<T>, body: unknown, what: string): T => {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new restate.TerminalError(describeIssue(r.error.issues, what), { errorCode: 400 });
  return r.data;
};

export function buildWorkflowPauseObject() {
  return restate.object({
    name: WORKFLOW_PAUSE_OBJECT,
    handlers: {
      /** Pauses the workflow; the first asker stays. Returns the pause. */
      pause: async (ctx: restate.ObjectContext, body: unknown): Promise<WorkflowPaused> => {
        const { by } = parsed(pauseBody, body, 'workflow pause');
        const was = await ctx.get<WorkflowPaused>('paused');
        if (was) return was;
        const p = { by, t: await ctx.date.now() };
        ctx.set('paused', p);
        return p;
      },
      /** Unpauses it; returns the pause (null: it was not paused) and its held runs, oldest first. */
      resume: async (ctx: restate.ObjectContext): Promise<{ paused: WorkflowPaused | null; held: string[] }> => {
        const paused = (await ctx.get<WorkflowPaused>('paused')) ?? null;
        const held = (await ctx.get<string[]>('held')) ?? [];
        ctx.clear('paused');
        ctx.clear('held');
        return { paused, held };
      },
      peek: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<WorkflowPaused | null> => (await ctx.get<WorkflowPaused>('paused')) ?? null),
      /** A new run asks: held (its pause noted, listed) while the workflow is paused; null: go. */
      hold: async (ctx: restate.ObjectContext, body: unknown): Promise<WorkflowPaused | null> => {
        const { runId } = parsed(holdBody, body, 'hold request');
        const p = await ctx.get<WorkflowPaused>('paused');
        if (!p) return null;
        try {
          await ctx.genericCall({
            service: serviceName(ctx.key), method: 'pause', key: runId,
            parameter: { by: heldBy(p.by), t: p.t, held: true }, inputSerde: restate.serde.json, outputSerde: restate.serde.json,
          });
        } catch (err) {
          // Refused (the run is being cancelled): not held; its cancel ends it.
          if (err instanceof restate.TerminalError) return null;
          throw err;
        }
        ctx.set('held', [...((await ctx.get<string[]>('held')) ?? []), runId]);
        return p;
      },
    },
  });
}

export type WorkflowPauseObject = ReturnType<typeof buildWorkflowPauseObject>;
