// A virtual object that keeps one zod-checked record per key (a run id) and clears it after
// the engine's retention, as Restate drops the run itself: each write schedules a delayed
// `expire`, which clears the state unless a later write came. tqdiverged and tqoutput are two.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import type { z } from 'zod';
import { describeIssue } from '../../domain/validate.ts';
import { sqlString, type AdminApi } from './admin-api.ts';

export function expiringRecordObject(name: string, method: string, schema: z.ZodType, what: string, retentionMs: number) {
  return restate.object({
    name,
    handlers: {
      [method]: async (ctx: restate.ObjectContext, body: unknown): Promise<void> => {
        const v = schema.safeParse(body);
        if (!v.success) throw new restate.TerminalError(describeIssue(v.error.issues, what), { errorCode: 400 });
        ctx.set('record', v.data);
        ctx.set('at', await ctx.date.now());
        ctx.genericSend({ service: name, method: 'expire', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: retentionMs });
      },
      expire: async (ctx: restate.ObjectContext): Promise<void> => {
        const at = (await ctx.get<number>('at')) ?? 0;
        if ((await ctx.date.now()) - at >= retentionMs) ctx.clearAll();
      },
    },
  });
}

/** The records kept for these keys, by key (one admin query); a record the schema refuses is left out. */
export async function recordsOf<T>(admin: AdminApi, name: string, schema: z.ZodType<T>, keys: readonly string[]): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  if (keys.length === 0) return out;
  const rows = await admin.query<{ k: string; value_utf8: string | null }>(
    `SELECT service_key AS k, value_utf8 FROM state WHERE service_name = ${sqlString(name)} AND key = 'record' AND service_key IN (${[...new Set(keys)].map(sqlString).join(',')})`,
  );
  for (const r of rows) {
    const v = r.value_utf8 ? schema.safeParse(JSON.parse(r.value_utf8)) : undefined;
    if (v?.success) out.set(r.k, v.data);
  }
  return out;
}
