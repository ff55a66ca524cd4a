// A workflow file's last Deno child per run on Restate (docs/runner.md, "runs describe"): its
// pid, exit and bounded stdout/stderr, as the SQLite backend keeps them in `run_output`. The
// engine process that ran the child records it here (a virtual object keyed by run id), so
// `runs describe` shows it from any replica or data dir. Written after each child, outside the
// run's journal (the output of a replay's child is new); read by run-reader.ts.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import type { ChildOutput } from '../../domain/run-view.ts';
import { describeIssue } from '../../domain/validate.ts';
import { sqlString, type AdminApi } from './admin-api.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const OUTPUT_OBJECT = 'tqoutput';

/** The runner bounds each stream to 64 KiB; a little room for multi-byte text. */
const outputSchema = z.object({ pid: z.number().int().nonnegative(), exit: z.string().max(200).optional(), stdout: z.string().max(256 * 1024), stderr: z.string().max(256 * 1024) }).strict();

/** `retentionMs`: the engine's retention (docs/data.md): the kept output is cleared that long
 *  after its last save, as Restate drops the finished run itself (a delayed call to `expire`). */
export function buildOutputObject(retentionMs: number) {
  return restate.object({
    name: OUTPUT_OBJECT,
    handlers: {
      save: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const o = outputSchema.safeParse(body);
        if (!o.success) throw new restate.TerminalError(describeIssue(o.error.issues, 'child output'), { errorCode: 400 });
        ctx.set('out', o.data);
        ctx.set('at', await ctx.date.now());
        ctx.genericSend({ service: OUTPUT_OBJECT, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: retentionMs });
      },
      /** Clears the output unless a later save came since (its own expire follows). */
      expire: async (ctx: restate.ObjectContext): Promise<void> => {
        const at = (await ctx.get<number>('at')) ?? 0;
        if ((await ctx.date.now()) - at >= retentionMs) ctx.clearAll();
      },
    },
  });
}

export async function outputOf(admin: AdminApi, runId: string): Promise<ChildOutput | undefined> {
  const rows = await admin.query<{ value_utf8: string | null }>(
    `SELECT value_utf8 FROM state WHERE service_name = ${sqlString(OUTPUT_OBJECT)} AND service_key = ${sqlString(runId)} AND key = 'out'`,
  );
  const v = rows[0]?.value_utf8 ? outputSchema.safeParse(JSON.parse(rows[0].value_utf8)) : undefined;
  return v?.success ? (v.data as ChildOutput) : undefined;
}
