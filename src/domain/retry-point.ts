// runs.retry: where a failed run resumes and what it gives up (docs/semantics.md `## Retry`).
// Pure: every backend (and `why`) asks this one function, over its journal or its step
// views, so a retry truncates the same steps everywhere and reports exactly what it did.
import { ValidationError } from './errors.ts';
import type { StepKind, StepStatus } from './run-view.ts';

/** What the rule reads of a recorded step (a JournalEntry and a StepView both fit). */
export interface RecordedStepInfo {
  seq: number;
  name: string;
  kind: StepKind;
  status: StepStatus;
}

/** engine.runs.retry's options. */
export interface RetryOptions {
  /** A recorded step name (`charge`, `charge#2`): resume there instead of the default point. */
  from?: string;
}

/** What runs.retry did: the step the run resumes at (absent: the run failed in code outside
 *  any step, so it replays from the top with nothing discarded) and every recorded step
 *  from there on, which the journal no longer holds; each runs again only if the code
 *  reaches it again. */
export interface RetryResult {
  from?: { seq: number; name: string };
  discarded: RecordedStepInfo[];
}

/** The default resume point: the earliest failed `do` or `use` step (a capability step has
 *  step.do's retry rules: a provider's TerminalError or its exhausted retries fail it, and a
 *  retry must ask the provider again, not replay the recorded failure); with none, the
 *  earliest timed-out wait (a run that failed only because a wait timed out waits again). A
 *  caught timeout before a failed step is control flow (reminder loops, escalation) and is kept. */
function defaultPoint(steps: readonly RecordedStepInfo[]): RecordedStepInfo | undefined {
  return steps.find((s) => (s.kind === 'do' || s.kind === 'use') && s.status === 'failed') ?? steps.find((s) => s.kind === 'wait' && s.status === 'timedout');
}

/** The retry of a run with these recorded steps; undefined when `from` names no recorded
 *  step (the caller refuses the retry: see unknownRetryPoint). */
export function retryPlan(steps: readonly (RecordedStepInfo | undefined)[], from?: string): RetryResult | undefined {
  // A journal by seq has holes where a step was called but nothing recorded (a wait still
  // open when the run failed): filter skips them (a spread would make them undefined).
  const sorted = steps.filter((st): st is RecordedStepInfo => st !== undefined).sort((a, b) => a.seq - b.seq);
  const point = from === undefined ? defaultPoint(sorted) : sorted.find((s) => s.name === from);
  if (from !== undefined && !point) return undefined;
  if (!point) return { discarded: [] };
  return {
    from: { seq: point.seq, name: point.name },
    discarded: sorted.filter((s) => s.seq >= point.seq).map(({ seq, name, kind, status }) => ({ seq, name, kind, status })),
  };
}

export function unknownRetryPoint(runId: string, from: string): ValidationError {
  return new ValidationError(`runs.retry: run ${runId} has no recorded step named '${from}'`);
}
