// Approvals of workflow files' permission declarations on Restate (docs/runner.md, Approval):
// a virtual object keyed by workflow name whose state is every declaration ever approved for
// it. Kept in Restate, not in a data dir's file, so every engine serving the same Restate
// reads the same approvals; a run's handler reads them through a journaled call, so a replay
// of the invocation sees what the first execution saw.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import type { ApprovalRecord } from '../../domain/approval.ts';
import { permissionsSchema } from '../../domain/permissions.ts';
import { describeIssue } from '../../domain/validate.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const APPROVALS_OBJECT = 'tqapprovals';

const approvalSchema = z
  .object({
    workflow: z.string().min(1).max(200),
    hash: z.string().regex(/^[0-9a-f]{16}$/),
    declaration: permissionsSchema(),
    approvedAt: z.number().int().nonnegative(),
  })
  .strict();

/** Newest first, as the SQLite table is read. */
function newestFirst(list: ApprovalRecord[]): ApprovalRecord[] {
  return [...list].sort((a, b) => b.approvedAt - a.approvedAt || a.hash.localeCompare(b.hash));
}

export function buildApprovalsObject() {
  return restate.object({
    name: APPROVALS_OBJECT,
    handlers: {
      /** Stores (or refreshes the time of) one approval; returns them all, newest first. */
      approve: async (ctx: restate.ObjectContext, body: unknown): Promise<ApprovalRecord[]> => {
        const a = approvalSchema.safeParse(body);
        if (!a.success) throw new restate.TerminalError(describeIssue(a.error.issues, 'approval'), { errorCode: 400 });
        if (a.data.workflow !== ctx.key) throw new restate.TerminalError(`approval names workflow '${a.data.workflow}', not '${ctx.key}'`, { errorCode: 400 });
        const list = ((await ctx.get<ApprovalRecord[]>('approvals')) ?? []).filter((x) => x.hash !== a.data.hash);
        const next = newestFirst([...list, a.data as ApprovalRecord]);
        ctx.set('approvals', next);
        return next;
      },
      list: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<ApprovalRecord[]> => {
        return newestFirst((await ctx.get<ApprovalRecord[]>('approvals')) ?? []);
      }),
    },
  });
}

export type ApprovalsObject = ReturnType<typeof buildApprovalsObject>;
