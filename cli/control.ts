// `tranquil runs rerun | pause | resume` (docs/control.md): through a running serve's control
// channel, or an in-process engine when none runs (program.ts mutate). The run id is checked
// here with the engine's own rule so a bad one fails with one line before anything starts.
import type { Command } from 'commander';
import * as z from 'zod';
import { parseOrThrow } from '../src/domain/validate.ts';
import type { ResumeResult } from '../src/domain/run-control.ts';
import { cliAsker, common, mutate, print, type Common } from './program.ts';

const runIdSchema = z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').regex(/^[A-Za-z0-9_.:\-]+$/, 'letters, digits and _ . : - only');
const runId = (v: string, what = 'runId'): string => parseOrThrow(runIdSchema, v, what);

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

export function controlCommands(runs: Command): void {
  common(runs.command('rerun <runId>').description("start a new run with a finished run's input (linked both ways)"))
    .option('--run-id <id>', 'the new run\'s id (default: a new one)')
    .action(async (id: string, o: Common & { runId?: string }) => {
      const r = (await mutate(o, { op: 'rerun', runId: runId(id), ...(o.runId !== undefined ? { newRunId: runId(o.runId, '--run-id') } : {}) })) as { runId: string; created: boolean; rerunOf: string };
      print(o, r, () => `${r.created ? 'started' : 'already exists:'} ${r.runId} (rerun of ${id})`);
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
