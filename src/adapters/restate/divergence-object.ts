// Divergences on Restate (docs/restate.md, "Where semantics differ"): when a run's code no
// longer matches its journal, the engine that saw it ends the invocation (Restate would
// retry the replay forever) and records the NonDeterminismError. Recorded here, in a virtual
// object keyed by run id, and not only in that engine's data dir: every replica and the CLI
// of any data dir then show the run as failed with that error, where a killed invocation
// alone reads as cancelled. Written once per divergence (rare); read by run-reader.ts.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import type { ErrorInfo } from '../../domain/errors.ts';
import { errorInfoSchema } from '../../domain/runner-protocol.ts';
import { describeIssue } from '../../domain/validate.ts';
import { sqlString, type AdminApi } from './admin-api.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const DIVERGENCE_OBJECT = 'tqdiverged';

/** `retentionMs`: the engine's retention (docs/data.md): the record is cleared that long after
 *  it was written, as Restate drops the killed run itself (a delayed call to `expire`). */
export function buildDivergenceObject(retentionMs: number) {
  return restate.object({
    name: DIVERGENCE_OBJECT,
    handlers: {
      record: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const e = errorInfoSchema.safeParse(body);
        if (!e.success) throw new restate.TerminalError(describeIssue(e.error.issues, 'divergence'), { errorCode: 400 });
        ctx.set('error', e.data);
        ctx.set('at', await ctx.date.now());
        ctx.genericSend({ service: DIVERGENCE_OBJECT, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: retentionMs });
      },
      expire: async (ctx: restate.ObjectContext): Promise<void> => {
        const at = (await ctx.get<number>('at')) ?? 0;
        if ((await ctx.date.now()) - at >= retentionMs) ctx.clearAll();
      },
    },
  });
}

/** The recorded divergences of these runs, by run id (one query). */
export async function divergencesIn(admin: AdminApi, runIds: readonly string[]): Promise<Map<string, ErrorInfo>> {
  const out = new Map<string, ErrorInfo>();
  if (runIds.length === 0) return out;
  const rows = await admin.query<{ run_id: string; value_utf8: string | null }>(
    `SELECT service_key AS run_id, value_utf8 FROM state WHERE service_name = ${sqlString(DIVERGENCE_OBJECT)} AND key = 'error' AND service_key IN (${[...new Set(runIds)].map(sqlString).join(',')})`,
  );
  for (const r of rows) {
    const e = r.value_utf8 ? errorInfoSchema.safeParse(JSON.parse(r.value_utf8)) : undefined;
    if (e?.success) out.set(r.run_id, e.data as ErrorInfo);
  }
  return out;
}
