// A workflow file's last Deno child per run on Restate (docs/runner.md, "Child output"): its
// pid, exit and bounded stdout/stderr, as the SQLite backend keeps them in `run_output`. The
// engine process that ran the child records it here (a virtual object keyed by run id), so
// `runs describe` shows it from any replica or data dir. Written after each child, outside the
// run's journal (the output of a replay's child is new); kept for the retention; read by
// run-reader.ts.
import * as z from 'zod';
import type { ChildOutput } from '../../domain/run-view.ts';
import type { AdminApi } from './admin-api.ts';
import { expiringRecordObject, recordsOf } from './expiring-record.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const OUTPUT_OBJECT = 'tqoutput';

/** The runner bounds each stream to 64 KiB; a little room for multi-byte text. */
const outputSchema = z.object({ pid: z.number().int().nonnegative(), exit: z.string().max(200).optional(), stdout: z.string().max(256 * 1024), stderr: z.string().max(256 * 1024) }).strict();

export const buildOutputObject = (retentionMs: number) => expiringRecordObject(OUTPUT_OBJECT, 'save', outputSchema, 'child output', retentionMs);

export async function outputOf(admin: AdminApi, runId: string): Promise<ChildOutput | undefined> {
  return (await recordsOf(admin, OUTPUT_OBJECT, outputSchema, [runId])).get(runId) as ChildOutput | undefined;
}
