// RunView from Restate's admin SQL: the invocation row says whether the run is alive or how
// it completed; the workflow's own state (`~meta`, `~run`, `~s<p>`, written by the run
// handler) says what it is doing. Same shape as the SQLite backend's views.
import type { ErrorInfo } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import type { RunView, StepView } from '../../domain/run-view.ts';
import { identityCodec, openJson, sealJson, type PayloadCodec } from '../../domain/payload-codec.ts';
import type { RunState } from './run-handler.ts';

/** A copy of `obj` whose payload fields are in their stored (sealed) form. */
export function sealPayloads<T extends object>(codec: PayloadCodec, obj: T, fields: readonly (keyof T & string)[]): T {
  if (codec.name === 'identity') return obj;
  const out = { ...obj } as Record<string, unknown>;
  for (const f of fields) if (out[f] !== undefined) out[f] = sealJson(codec, out[f] as Json);
  return out as T;
}

/** The inverse of sealPayloads. */
export function openPayloads<T extends object>(codec: PayloadCodec, obj: T, fields: readonly (keyof T & string)[]): T {
  const out = { ...obj } as Record<string, unknown>;
  for (const f of fields) if (out[f] !== undefined) out[f] = openJson(codec, out[f]);
  return out as T;
}

export interface InvocationRow {
  id: string;
  svc: string;
  run_id: string;
  status: string;
  completion_result: string | null;
  completion_failure: string | null;
  created_at: string | number | null;
  modified_at: string | number | null;
  last_failure: string | null;
  last_failure_error_code: string | null;
}

export const INVOCATION_COLUMNS = `id, target_service_name AS svc, target_service_key AS run_id, status, completion_result,
  completion_failure, created_at, modified_at, last_failure, last_failure_error_code`;

export interface RunStateRows {
  meta?: { version: string; input: Json; startedAt?: string };
  run?: RunState;
  steps: StepView[];
}

const iso = (v: string | number | null | undefined): string => {
  if (v === null || v === undefined) return new Date(0).toISOString();
  const d = typeof v === 'number' ? new Date(v) : new Date(/^\d+$/.test(v) ? Number(v) : v);
  return Number.isNaN(d.getTime()) ? String(v) : d.toISOString();
};

/** `codec`: payloads in state (input, output, error, step result and error) are sealed. */
export function collectState(rows: { key: string; value_utf8: string | null }[], codec: PayloadCodec = identityCodec): RunStateRows {
  const out: RunStateRows = { steps: [] };
  for (const r of rows) {
    if (r.value_utf8 == null) continue;
    const v = JSON.parse(r.value_utf8) as unknown;
    if (r.key === '~meta') out.meta = openPayloads(codec, v as RunStateRows['meta'] & object, ['input']);
    else if (r.key === '~run') out.run = openPayloads(codec, v as RunState, ['output', 'error']);
    else if (/^~s\d+$/.test(r.key)) out.steps.push(openPayloads(codec, v as StepView, ['result', 'error']));
  }
  out.steps.sort((a, b) => a.seq - b.seq);
  return out;
}

/** `[409] Cancelled` / `[500] boom` -> parts. */
function parseFailure(f: string | null): { code: number; message: string } {
  const m = /^\[(\d+)\]\s*([\s\S]*)$/.exec(f ?? '');
  return m ? { code: Number(m[1]), message: m[2]! } : { code: 0, message: f ?? 'unknown failure' };
}

export function buildView(workflow: string, inv: InvocationRow, state: RunStateRows, diverged: ErrorInfo | undefined): RunView {
  let status: RunStatus;
  let error: ErrorInfo | undefined;
  let output: Json | undefined;
  let wakeAt: string | undefined;
  let cancel: RunView['cancel'];
  let paused: RunView['paused'];
  let updatedAt = iso(inv.modified_at);
  const run = state.run;
  if (diverged) {
    status = 'failed';
    error = diverged;
  } else if (inv.status === 'completed') {
    if (inv.completion_result === 'success') {
      status = 'succeeded';
      output = run?.output ?? null;
    } else {
      const f = parseFailure(inv.completion_failure);
      if (f.code === 409) {
        status = 'cancelled';
        if (run?.cancel) cancel = run.cancel;
      }
      else {
        status = 'failed';
        error = run?.error ?? { name: 'Error', message: f.message };
      }
    }
    // The handler's last write took this state at run.at, before Restate marked the
    // invocation completed (modified_at, a moment later): the same transition keeps one
    // time, whichever of the two a reader saw (lifecycle notifications key on it).
    if (run?.status === status && typeof run.at === 'number') updatedAt = iso(run.at);
  } else if (inv.status === 'paused') {
    // Invocation-level retries exhausted (the endpoint kept failing): needs an operator.
    status = 'blocked';
    error = { name: 'Error', message: inv.last_failure ?? 'invocation paused by Restate' };
  } else if (!run) {
    status = 'pending'; // accepted, the handler has not started yet
  } else {
    status = run.status as RunStatus;
    if (typeof run.at === 'number') updatedAt = iso(run.at);
    if (run.status === 'failed' || run.status === 'blocked') error = run.error;
    if (run.status === 'succeeded') output = run.output ?? null;
    if (run.status === 'cancelled' && run.cancel) cancel = run.cancel;
    if (run.status === 'paused' && run.paused) paused = run.paused;
    wakeAt = run.wakeAt;
  }
  const v: RunView = {
    runId: inv.run_id,
    workflow,
    version: state.meta?.version ?? 'unknown',
    status,
    input: state.meta?.input ?? null,
    createdAt: iso(inv.created_at),
    updatedAt,
    steps: state.steps,
  };
  if (output !== undefined) v.output = output;
  if (error !== undefined) v.error = error;
  if (wakeAt !== undefined) v.wakeAt = wakeAt;
  if (cancel !== undefined) v.cancel = cancel;
  if (paused !== undefined) v.paused = paused;
  return v;
}
