// Divergences on Restate (docs/restate.md, "Where semantics differ"): when a run's code no
// longer matches its journal, the engine that saw it ends the invocation (Restate would
// retry the replay forever) and records the NonDeterminismError. Recorded here, in a virtual
// object keyed by run id, and not only in that engine's data dir: every replica and the CLI
// of any data dir then show the run as failed with that error, where a killed invocation
// alone reads as cancelled. Written once per divergence (rare); kept for the retention; read
// by run-reader.ts.
import type { ErrorInfo } from '../../domain/errors.ts';
import { errorInfoSchema } from '../../domain/runner-protocol.ts';
import type { AdminApi } from './admin-api.ts';
import { expiringRecordObject, recordsOf } from './expiring-record.ts';

/** Not `tq_`: no workflow's service name can equal it and run listings never see it. */
export const DIVERGENCE_OBJECT = 'tqdiverged';

export const buildDivergenceObject = (retentionMs: number) => expiringRecordObject(DIVERGENCE_OBJECT, 'record', errorInfoSchema, 'divergence', retentionMs);

/** The recorded divergences of these runs, by run id (one query). */
export const divergencesIn = (admin: AdminApi, runIds: readonly string[]): Promise<Map<string, ErrorInfo>> =>
  recordsOf(admin, DIVERGENCE_OBJECT, errorInfoSchema, runIds) as Promise<Map<string, ErrorInfo>>;
