// The CLI's mutating commands as data: one zod-validated union (src/adapters/http/
// control-protocol.ts), applied to an Engine either inside a running `serve` (via the control
// endpoint) or in-process. Same code both ways. Here: how their results read for a person.
import { dirname, isAbsolute, join, normalize } from 'node:path';
import type { RetryResult } from '../src/domain/retry-point.ts';
import { resolved } from '../src/adapters/deno/grant-check.ts';

// The requests themselves live with the control channel, where the app's attach() uses them too.
export { applyOp, opSchema, type Op } from '../src/adapters/http/control-protocol.ts';

/** `tranquil workflows approve` for a person: what was approved and what it released. */
export function describeApproval(r: { workflow: string; hash: string; version: string; declaration: Record<string, string[] | undefined>; released: string[]; file?: string }): string {
  // A path grant as written and as the child gets it: absolute, symlinks followed (issue 36:
  // "read ./symdata" hid that it named a secrets directory).
  const shown = (k: string, e: string) => {
    if ((k !== 'read' && k !== 'write') || r.file === undefined) return e;
    const abs = isAbsolute(e) ? normalize(e) : join(dirname(r.file), e);
    const real = resolved(abs);
    return real === abs ? `${e} (${abs})` : `${e} (${abs} -> ${real})`;
  };
  const grants = Object.entries(r.declaration).flatMap(([k, v]) => (v ?? []).map((e) => `  ${k} ${shown(k, e)}`));
  return [
    `approved the permission declaration ${r.hash} of workflow '${r.workflow}' (file version ${r.version}):`,
    ...(grants.length ? grants : ['  (no grants: the child may only talk to the engine)']),
    r.released.length ? `released ${r.released.length} blocked run${r.released.length === 1 ? '' : 's'}: ${r.released.join(' ')}` : 'no blocked run to release',
  ].join('\n');
}

/** `tranquil runs retry` for a person: where the run resumes and every step it discarded. */
export function describeRetry(r: RetryResult & { runId: string }): string {
  if (!r.from) return `retrying ${r.runId}: it failed outside any step; its code runs again from the last recorded step, nothing discarded`;
  const n = r.discarded.length;
  return [
    `retrying ${r.runId} from step '${r.from.name}'; discarded ${n} recorded step${n === 1 ? '' : 's'}:`,
    ...r.discarded.map((d) => `  [${d.seq}] ${d.kind} '${d.name}' ${d.status}`),
  ].join('\n');
}
