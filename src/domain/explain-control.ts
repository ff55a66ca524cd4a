// What `why` adds for run control (docs/control.md): a run's deadline and how it timed out,
// a paused run (who, when, the command that resumes it), and its rerun and fork links. Pure.
import { formatDuration } from './duration.ts';
import type { Explanation } from './explain.ts';
import { isDeadlineError } from './run-control.ts';
import type { RunView } from './run-view.ts';
import { publishedState } from './published-state.ts';
import { workflowPauser } from './workflow-pause.ts';

export function withControl(e: Explanation, run: RunView, now: number): Explanation {
  const head = `Run ${run.runId} of workflow '${run.workflow}' (version ${run.version})`;
  const details = [...e.details];
  if (run.rerunOf) {
    const f = run.forkedFrom;
    details.push(f ? `fork of run ${run.rerunOf} from step '${f.name}' (position ${f.seq}): the steps before it reused that run's recorded results` : `rerun of run ${run.rerunOf}`);
  }
  if (run.reruns?.length) details.push(`rerun or forked as ${run.reruns.map((r) => `run ${r}`).join(', ')}`);
  const keys = publishedState(run.steps).map((p) => `'${p.key}'`);
  if (keys.length) details.push(`published state: ${keys.join(', ')} (read with \`tranquil runs state ${run.runId} <key>\`)`);
  let out: Explanation = { ...e, details };
  if (run.status === 'failed' && isDeadlineError(run.error)) {
    const hit = run.steps.find((s) => isDeadlineError(s.error));
    out = {
      ...out,
      summary: `${head} timed out: deadline ${run.deadline ?? '(not recorded)'}; timed out at ${run.updatedAt}` +
        `${hit ? `, the deadline reaching it in step '${hit.name}'` : ''}, after its cleanup.`,
      next: `To run it again with the same input: \`tranquil runs rerun ${run.runId}\`.`,
    };
  } else if (run.status === 'paused' && run.paused?.held) {
    const who = workflowPauser(run.paused.by);
    out = {
      ...out,
      summary: `${head} is held: workflow '${run.workflow}' is paused by ${who} at ${run.paused.at}, and this run was created while it was; ` +
        `none of its code ran, it holds no slot; resume the workflow with \`tranquil workflows resume ${run.workflow}\` (held runs go on in creation order; \`--skip-held\` skips them).`,
      next: `Resume the workflow: \`tranquil workflows resume ${run.workflow}\`; or this run alone: \`tranquil runs resume ${run.runId}\`.`,
    };
  } else if (run.status === 'paused') {
    const p = run.paused;
    out = {
      ...out,
      summary: `${head} is paused${p ? ` by ${p.by} at ${p.at}` : ''}; it holds no slot and runs nothing until resumed; ` +
        `resume with \`tranquil runs resume ${run.runId}\` (what came due meanwhile runs then).`,
      next: `Resume it: \`tranquil runs resume ${run.runId}\`.`,
    };
  } else if (run.deadline && !['succeeded', 'failed', 'cancelled'].includes(run.status)) {
    const ms = Date.parse(run.deadline) - now;
    out = { ...out, summary: `${out.summary} Deadline ${run.deadline}${ms > 0 ? ` (in ${formatDuration(ms)})` : ' (passed: it is being stopped)'}.` };
  }
  if (run.status === 'cancelled') out = { ...out, next: `To continue it from where it stopped: \`tranquil runs resume ${run.runId}\`; to start it anew: \`tranquil runs rerun ${run.runId}\`.` };
  return out;
}
