// `tranquil runs rerun | fork | pause | resume` and `tranquil workflows pause | resume` (docs/control.md): through a running serve's control
// channel, or an in-process engine when none runs (program.ts mutate). The run id is checked
// here with the engine's own rule so a bad one fails with one line before anything starts.
import type { Command } from 'commander';
import * as z from 'zod';
import { parseOrThrow } from '../src/domain/validate.ts';
import type { ResumeResult } from '../src/domain/run-control.ts';
import { cliAsker, common, mutate, print, type Common } from './program.ts';
import { ValidationError } from '../src/domain/errors.ts';
import type { ForkResult } from '../src/domain/run-fork.ts';
import type { WorkflowPause, WorkflowResumeResult } from '../src/domain/workflow-pause.ts';

const runIdSchema = z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').regex(/^[A-Za-z0-9_.:\-]+$/, 'letters, digits and _ . : - only');
/** A run id argument, checked with the engine's rule (one line naming `what` when bad). */
export const runIdArg = (v: string, what = 'runId'): string => parseOrThrow(runIdSchema, v, what);
const runId = runIdArg;

/** What `runs resume` did, for a person. */
export function describeResume(r: ResumeResult & { runId: string }): string {
  if (r.resumed === 'paused') return `resumed ${r.runId}: it goes on from where it paused (what came due meanwhile runs now)`;
  if (!r.from) return `continuing ${r.runId}: its cancel reached no step; its code runs again from the last recorded step, nothing discarded`;
  const n = r.discarded.length;
  return [
    `continuing ${r.runId} from step '${r.from.name}' (where its cancel landed); discarded ${n} recorded step${n === 1 ? '' : 's'}:`,
    ...r.discarded.map((d) => `  [${d.seq}] ${d.kind} '${d.name}' ${d.status}`),
  ].join('\n');
}

/** `runs fork`'s fork point: exactly one of --from (a name) and --position (a number). */
function forkPoint(o: { from?: string; position?: string }): string | number {
  if ((o.from === undefined) === (o.position === undefined)) throw new ValidationError('runs fork: give the step to fork from as --from <step name> or --position <n> (one of them)');
  if (o.from !== undefined) return o.from;
  if (!/^\d{1,9}$/.test(o.position!)) throw new ValidationError(`--position: '${o.position}' is not a position (a whole number from 0)`);
  return Number(o.position);
}

/** What `runs fork` did, for a person. */
export function describeFork(original: string, r: ForkResult): string {
  const n = r.reused.length;
  const head = `${r.created ? 'started' : 'already exists:'} ${r.runId} (fork of ${original} from step '${r.from.name}' at position ${r.from.seq})`;
  if (!r.created) return head;
  return n === 0 ? `${head}; no recorded step reused` : `${head}; reused ${n} recorded step${n === 1 ? '' : 's'}: ${r.reused.map((s) => `'${s.name}'`).join(', ')}`;
}

export function controlCommands(runs: Command): void {
  common(runs.command('rerun <runId>').description("start a new run with a finished run's input (linked both ways)"))
    .option('--run-id <id>', 'the new run\'s id (default: a new one)')
    .action(async (id: string, o: Common & { runId?: string }) => {
      const r = (await mutate(o, { op: 'rerun', runId: runId(id), ...(o.runId !== undefined ? { newRunId: runId(o.runId, '--run-id') } : {}) })) as { runId: string; created: boolean; rerunOf: string };
      print(o, r, () => `${r.created ? 'started' : 'already exists:'} ${r.runId} (rerun of ${id})`);
    });
  common(runs.command('fork <runId>').description('start a new run from a step of a run: the steps before it reuse its recorded results (linked both ways)'))
    .option('--from <step>', 'the recorded step to run fresh from (its name, e.g. charge or charge#2)')
    .option('--position <n>', 'the step to run fresh from, by its position in the run (from 0)')
    .option('--run-id <id>', 'the new run\'s id (default: a new one)')
    .action(async (id: string, o: Common & { from?: string; position?: string; runId?: string }) => {
      const r = (await mutate(o, { op: 'fork', runId: runId(id), from: forkPoint(o), ...(o.runId !== undefined ? { newRunId: runId(o.runId, '--run-id') } : {}) })) as ForkResult & { forkOf: string };
      print(o, r, () => describeFork(id, r));
    });
  common(runs.command('pause <runId>').description('pause a run at its next step boundary (resume with `runs resume`)'))
    .action(async (id: string, o: Common) => {
      print(o, await mutate(o, { op: 'pause', runId: runId(id), by: cliAsker() }), () => `pausing ${id}: it stops at its next step boundary; resume with \`tranquil runs resume ${id}\``);
    });
  common(runs.command('resume <runId>').description('let a paused run go on, or continue a cancelled run from where it stopped'))
    .action(async (id: string, o: Common) => {
      const r = (await mutate(o, { op: 'resume', runId: runId(id) })) as ResumeResult & { runId: string };
      print(o, r, () => describeResume(r));
    });
}

/** What `workflows resume` did, for a person. */
export function describeWorkflowResume(r: WorkflowResumeResult): string {
  const n = r.runs.length;
  if (n === 0) return `resumed workflow ${r.workflow}: no run was held`;
  const did = r.held === 'skip' ? 'skipped (their code never ran)' : 'resumed in creation order';
  return [`resumed workflow ${r.workflow}; ${n} held run${n === 1 ? '' : 's'} ${did}:`, ...r.runs.map((id) => `  ${id}`)].join('\n');
}

export function workflowPauseCommands(workflows: Command): void {
  common(workflows.command('pause <workflow>').description('pause a workflow: its new runs (events, schedule slots, webhooks, starts) are created and held before their code runs'))
    .option('--by <who>', 'who pauses it (shown by `why` and `workflows list`; default: cli (<user>@<host>))')
    .action(async (workflow: string, o: Common & { by?: string }) => {
      const p = (await mutate(o, { op: 'workflow-pause', workflow, by: o.by ?? cliAsker() })) as WorkflowPause;
      print(o, p, () => `workflow ${p.workflow} paused by ${p.by} at ${p.at}: new runs are held; runs executing go on; resume with \`tranquil workflows resume ${p.workflow}\``);
    });
  common(workflows.command('resume <workflow>').description('resume a paused workflow: its held runs go on in creation order (--skip-held: they end skipped, their code never run)'))
    .option('--skip-held', 'end the held runs skipped instead of running them')
    .action(async (workflow: string, o: Common & { skipHeld?: boolean }) => {
      const r = (await mutate(o, { op: 'workflow-resume', workflow, held: o.skipHeld ? 'skip' : 'run' })) as WorkflowResumeResult;
      print(o, r, () => describeWorkflowResume(r));
    });
}
