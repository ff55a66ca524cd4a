// explain(): a run's state in plain English, from its view alone (pure; `now` is passed in).
// Answers the operator's first questions: what is it waiting for, until when, what failed.
import { formatDuration } from './duration.ts';
import type { RunView, StepView } from './run-view.ts';

export interface Explanation {
  runId: string;
  status: RunView['status'];
  summary: string;
  /** One line per notable step, oldest first. */
  details: string[];
  waitingFor?: { kind: 'time' | 'signal' | 'retry'; step: string; until?: string };
  failedStep?: { name: string; attempts: number; error: { name: string; message: string } };
}

const when = (iso: string, now: number): string => {
  const ms = Date.parse(iso) - now;
  return ms > 0 ? `${iso} (in ${formatDuration(ms)})` : `${iso} (due now)`;
};

function describeStep(s: StepView): string {
  const tries = s.attempts > 1 ? ` after ${s.attempts} attempts` : '';
  switch (s.status) {
    case 'succeeded': return `step ${s.seq + 1} '${s.name}' (${s.kind}) succeeded${tries}`;
    case 'failed': return `step ${s.seq + 1} '${s.name}' (${s.kind}) failed${tries}: ${s.error?.name}: ${s.error?.message}`;
    case 'timedout': return `step ${s.seq + 1} '${s.name}' (${s.kind}) timed out`;
    case 'retrying': return `step ${s.seq + 1} '${s.name}' attempt ${s.attempts} failed (${s.error?.name}: ${s.error?.message}); next attempt at ${s.nextRetryAt}`;
    case 'sleeping': return `step ${s.seq + 1} '${s.name}' sleeping until ${s.wakeAt}`;
    case 'waiting': return `step ${s.seq + 1} '${s.name}' waiting for signal '${baseName(s.name)}'${s.wakeAt ? ` until ${s.wakeAt}` : ''}`;
    case 'running': return `step ${s.seq + 1} '${s.name}' running`;
  }
}

const baseName = (unique: string): string => unique.replace(/#\d+$/, '');

export function explain(run: RunView, now: number): Explanation {
  const steps = run.steps.filter((s) => s.kind !== 'now' && s.kind !== 'random');
  const last = run.steps[run.steps.length - 1];
  const done = steps.filter((s) => s.status === 'succeeded').length;
  const head = `Run ${run.runId} of workflow '${run.workflow}' (version ${run.version})`;
  const base: Explanation = { runId: run.runId, status: run.status, summary: '', details: steps.map(describeStep) };

  switch (run.status) {
    case 'succeeded':
      return { ...base, summary: `${head} succeeded after ${done} completed step${done === 1 ? '' : 's'}, at ${run.updatedAt}.` };
    case 'cancelled':
      return { ...base, summary: `${head} was cancelled at ${run.updatedAt} after ${done} completed step${done === 1 ? '' : 's'}.` };
    case 'failed': {
      const failed = [...steps].reverse().find((s) => s.status === 'failed' || s.status === 'timedout');
      const err = run.error ?? { name: 'Error', message: 'unknown error' };
      if (failed && failed.error && failed.error.message === err.message) {
        return {
          ...base,
          failedStep: { name: failed.name, attempts: failed.attempts, error: failed.error },
          summary: `${head} failed: step '${failed.name}' failed on attempt ${failed.attempts} with ${err.name}: ${err.message}. ` +
            `runs.retry resumes it from that step with the same idempotency key.`,
        };
      }
      return { ...base, summary: `${head} failed outside any step with ${err.name}: ${err.message}.` };
    }
    case 'sleeping':
      if (last?.kind === 'sleep' && last.wakeAt) {
        return { ...base, waitingFor: { kind: 'time', step: last.name, until: last.wakeAt }, summary: `${head} is sleeping in step '${last.name}' until ${when(last.wakeAt, now)}.` };
      }
      break;
    case 'waiting':
      if (last?.kind === 'wait') {
        const until = last.wakeAt;
        return {
          ...base,
          waitingFor: { kind: 'signal', step: last.name, until },
          summary: `${head} is waiting in step '${last.name}' for signal '${baseName(last.name)}'` +
            (until ? `, timing out at ${when(until, now)}.` : ', with no timeout.'),
        };
      }
      break;
    case 'retrying':
      if (last?.status === 'retrying') {
        return {
          ...base,
          waitingFor: { kind: 'retry', step: last.name, until: last.nextRetryAt },
          summary: `${head} is retrying step '${last.name}': attempt ${last.attempts} failed with ${last.error?.name}: ${last.error?.message}; ` +
            `attempt ${last.attempts + 1} at ${last.nextRetryAt ? when(last.nextRetryAt, now) : 'once resumed'}.`,
        };
      }
      break;
    case 'pending':
      return { ...base, summary: `${head} is pending: created at ${run.createdAt}, not yet picked up by the engine.` };
    case 'running':
      return { ...base, summary: `${head} is running${last ? `; last recorded step: '${last.name}' (${last.status})` : ''}.` };
    case 'blocked':
      return {
        ...base,
        summary: `${head} is blocked: its workflow is not registered with this engine, or the backend stopped retrying it` +
          `${run.error ? ` (${run.error.name}: ${run.error.message})` : ''}; it needs an operator.`,
      };
  }
  // `parked` (listed in the public statuses; no backend produces it yet) and states whose step
  // record does not match the usual shape get the plain status line.
  return { ...base, summary: `${head} is ${run.status}${run.wakeAt ? ` until ${when(run.wakeAt, now)}` : ''}.` };
}
