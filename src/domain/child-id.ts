// A child run's id, derived from the parent's run and the step that starts it, so every
// replay, crash and retry of the parent finds the same child (docs/children.md). Apart from
// child-runs.ts because it digests: the engine side derives it (the step logs), so a Deno
// workflow child, which has no digest library, never imports it.
import { sha256Hex } from './sha256.ts';

const RUN_ID_MAX = 200;
const READABLE = /^[A-Za-z0-9_\-]+$/;

/** The child's run id for the step `uniqueName` (`pay`, `pay#2`) of run `parentRunId`:
 *  readable (`<parent>:<name>`, `#k` as `.k`) when the name is plain letters, digits, _ and -;
 *  else `<parent>:.<digest>`. Names of the readable form hold no `.` or `:`, so no two steps
 *  map to one id; too long for a run id (200): a digest of the whole. */
export function childRunId(parentRunId: string, uniqueName: string): string {
  const m = /^(.*?)(?:#(\d+))?$/.exec(uniqueName)!;
  const base = m[1]!;
  const readable = READABLE.test(base) ? `${parentRunId}:${base}${m[2] ? `.${m[2]}` : ''}` : `${parentRunId}:.${sha256Hex(uniqueName).slice(0, 16)}`;
  return readable.length <= RUN_ID_MAX ? readable : `c.${sha256Hex(`${parentRunId}/${uniqueName}`).slice(0, 40)}`;
}
