// Child runs in the simulation (issue 40, docs/children.md). A separate generator stream
// (so every seed's other draws, and so its workflows and actions, stay what they were) puts
// child calls into the seed's manual and event workflows: step.invoke, or step.start and then
// step.result (sometimes awaited twice, sometimes with a timeout, sometimes with
// onParentCancel 'abandon'), all of one child workflow `kid` built like the others (steps,
// sleeps, waits, failing at the end now and then). Checked against the file at the end:
//   child-once    exactly one child per call: every `kid` run is linked to a parent step
//                 and its run id is the one derived from them (childRunId), every recorded
//                 start step names the run it started, and that run exists
//   child-result  a parent's recorded end of a child is the child's end (status, output);
//                 what the parent's code got (in every execution, and from awaiting the same
//                 child again) is that output, or a ChildRunError for a failed or cancelled
//                 child, or a TimeoutError where the wait timed out
import type Database from 'better-sqlite3';
import { childRunId } from '../../../src/domain/child-id.ts';
import type { JournalEntry } from '../../../src/domain/journal.ts';
import { mulberry32, type Rng } from './prng.ts';

export interface InvokeOp {
  k: 'invoke';
  id: string;
  name: string;
  mode: 'invoke' | 'start';
  /** step.result awaited a second time (start mode). */
  twice: boolean;
  timeout?: number;
  abandon: boolean;
}

export const KID = 'kid';
const HOUR = 3_600_000;

/** The child calls of this seed: spliced into `programs` (by workflow name) in place; true
 *  when any was, so the seed registers `kid`. Draws only from its own stream. */
export function genInvokes(seed: number, programs: { name: string; ops: unknown[] }[]): { rng: Rng; any: boolean } {
  const rng = mulberry32(seed ^ 0x2545f491);
  let any = false;
  // Few and small (one call in some workflows, a child of at most two ops): a child is a
  // whole run, and the per-seed cost of the CI slice must stay put.
  for (const p of programs) {
    if (!rng.chance(p.name === 'simA' ? 0.4 : 0.2)) continue;
    for (let k = 1; k > 0; k--) {
      const mode = rng.chance(0.5) ? 'invoke' : 'start';
      const op: InvokeOp = {
        k: 'invoke', id: `${p.name}.k${k}`, name: rng.pick(['pay', 'ship', 'pay']), mode,
        twice: mode === 'start' && rng.chance(0.5),
        timeout: rng.chance(0.25) ? rng.pick([1000, HOUR]) : undefined,
        abandon: rng.chance(0.2),
      };
      p.ops.splice(rng.int(0, p.ops.length), 0, op);
      any = true;
    }
  }
  return { rng, any };
}

/** What a parent's code got from one await of a child. */
export interface ChildSeen {
  runId: string;
  childId: string;
  value: string;
  valid: boolean;
}

type RunRow = { run_id: string; workflow: string; status: string; output: string | null };

/** The child invariants over the final file (see the header). `starts`: `runId|unique name`
 *  of every child start step the code called. */
export function checkChildren(
  db: Database.Database, runs: RunRow[], journalOf: (runId: string) => JournalEntry[], starts: Set<string>, seen: ChildSeen[], violate: (what: string) => void,
): void {
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  const links = db.prepare(`SELECT run_id, parent_run_id, parent_step FROM run_links`).all() as { run_id: string; parent_run_id: string; parent_step: string }[];
  const linkOf = new Map(links.map((l) => [l.run_id, l]));
  const perCall = new Map<string, string[]>();
  for (const l of links) {
    const k = `${l.parent_run_id}|${l.parent_step}`;
    perCall.set(k, [...(perCall.get(k) ?? []), l.run_id]);
    if (l.run_id !== childRunId(l.parent_run_id, l.parent_step)) violate(`child-once: run ${l.run_id} is linked to step ${l.parent_step} of ${l.parent_run_id}, whose derived child id is ${childRunId(l.parent_run_id, l.parent_step)}`);
  }
  for (const [k, ids] of perCall) if (ids.length > 1) violate(`child-once: call ${k} started ${ids.length} children: ${ids.join(', ')}`);
  for (const r of runs) if (r.workflow === KID && !linkOf.has(r.run_id)) violate(`child-once: kid run ${r.run_id} has no parent link`);
  const ends = new Map<string, unknown>();
  for (const r of runs) {
    if (r.workflow === KID) continue;
    for (const e of journalOf(r.run_id)) {
      if (e.kind === 'do' && e.status === 'succeeded' && starts.has(`${r.run_id}|${e.name}`)) {
        const want = childRunId(r.run_id, e.name);
        if (e.result !== want) violate(`child-once: start step ${r.run_id}/${e.name} recorded ${JSON.stringify(e.result)}, its child is ${want}`);
        if (!byId.has(want)) violate(`child-once: start step ${r.run_id}/${e.name} recorded child ${want}, which does not exist`);
      }
      if (e.kind !== 'wait' || !e.name.startsWith('child:') || e.status !== 'succeeded') continue;
      const childId = e.name.slice('child:'.length).replace(/#\d+$/, '');
      const child = byId.get(childId);
      const end = e.result as { status?: string; output?: unknown } | undefined;
      if (!child) {
        violate(`child-result: ${r.run_id}/${e.name} recorded the end of ${childId}, which does not exist`);
        continue;
      }
      if (end?.status !== child.status) violate(`child-result: ${r.run_id}/${e.name} recorded ${JSON.stringify(end)}; the child ended ${child.status}`);
      else if (child.status === 'succeeded' && JSON.stringify(end.output) !== JSON.stringify(JSON.parse(child.output ?? 'null'))) {
        violate(`child-result: ${r.run_id}/${e.name} recorded output ${JSON.stringify(end.output)}; the child's output is ${child.output}`);
      }
      ends.set(`${r.run_id}|${childId}`, end);
    }
  }
  for (const s of seen) {
    if (!s.valid) continue;
    const child = byId.get(s.childId);
    // That wait timed out, or the parent's own cancel reached it: no end to compare.
    if (s.value.startsWith('caught:') && !s.value.startsWith('caught:ChildRunError:')) continue;
    if (!child || !['succeeded', 'failed', 'cancelled'].includes(child.status)) {
      violate(`child-result: ${s.runId} got ${s.value} from child ${s.childId}, which is ${child?.status ?? 'missing'}`);
      continue;
    }
    const want = child.status === 'succeeded' ? JSON.stringify(JSON.parse(child.output ?? 'null')) : 'caught:ChildRunError:';
    const ok = child.status === 'succeeded' ? s.value === want : s.value.startsWith(want);
    if (!ok) violate(`child-result: ${s.runId}'s code got ${s.value.slice(0, 200)} from child ${s.childId}, which ended ${child.status}${child.status === 'succeeded' ? ` with ${child.output}` : ''}`);
    if (!ends.has(`${s.runId}|${s.childId}`)) violate(`child-result: ${s.runId}'s code got the end of ${s.childId}, but its journal records none`);
  }
}
