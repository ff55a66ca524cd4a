// runs.fork (docs/control.md): a new run of a run's workflow version with its input, whose
// steps before a chosen step reuse the original's recorded outcomes. Pure: every backend asks
// this one function over the original's journal, so a fork reuses the same steps everywhere.
import { ValidationError } from './errors.ts';
import { childSignal } from './child-runs.ts';
import type { JournalEntry } from './journal.ts';
import { isDeadlineError } from './run-control.ts';
import type { StepView } from './run-view.ts';

/** engine.runs.fork's options. */
export interface ForkOptions {
  /** The fork point: a recorded step's name (`charge`, `charge#2`) or its position (seq, from 0).
   *  It and every step after it run fresh in the new run. */
  from: string | number;
  /** The new run's id (a second fork with it returns the first). */
  runId?: string;
}

/** What runs.fork did: the new run, the step it runs fresh from, and the recorded steps before
 *  it that the new run starts with (their outcomes are handed back, their bodies not run). */
export interface ForkResult {
  runId: string;
  created: boolean;
  from: { seq: number; name: string };
  reused: { seq: number; name: string }[];
}

/** What the backend writes with the new run: the fork point and the journal it starts with. */
export interface RunFork {
  from: { seq: number; name: string };
  entries: JournalEntry[];
}

/** Outcomes that no longer change: a step recorded in one of these is reused as it is. A step
 *  in flight before the fork point (running, retrying, sleeping, waiting, parked) is not
 *  copied: the new run meets it anew (its body runs, its sleep or wait starts again). */
const FINAL = new Set<JournalEntry['status']>(['succeeded', 'failed', 'timedout']);

/** The fork of run `runId` (its journal `entries`, the children it started) from `from`;
 *  a one-line ValidationError when `from` names no step the run reached, when a reused step
 *  got the run's cancel or deadline, or when a reused step started a child whose end the reused steps did not take (that end is reported to the
 *  original only: the fork would wait for it for good). */
export function forkPlan(runId: string, entries: readonly (JournalEntry | undefined)[], from: string | number, children: readonly { runId: string; step: string }[] = []): RunFork {
  const sorted = entries.filter((e): e is JournalEntry => e !== undefined).sort((a, b) => a.seq - b.seq);
  const point = typeof from === 'number' ? sorted.find((e) => e.seq === from) : sorted.find((e) => e.name === from);
  if (!point) {
    const last = sorted[sorted.length - 1];
    const recorded = last ? `its last recorded step is '${last.name}' at position ${last.seq}` : 'it recorded no step';
    throw new ValidationError(typeof from === 'number'
      ? `runs.fork: run ${runId} has no recorded step at position ${from} (${recorded})`
      : `runs.fork: run ${runId} has not reached a step named '${from}' (${recorded}; a name the code never called is not a step either)`);
  }
  const reused = sorted.filter((e) => e.seq < point.seq && FINAL.has(e.status));
  // What a cancel or the run's deadline threw into a step is not the step's outcome: reused,
  // it would stop the fork where the original was stopped.
  const stopped = reused.find((e) => e.error?.name === 'CancelledError' || isDeadlineError(e.error));
  if (stopped) {
    throw new ValidationError(`runs.fork: step '${stopped.name}' before '${point.name}' was stopped by the ${stopped.error!.name === 'CancelledError' ? 'cancel' : 'deadline'} of run ${runId}; fork from '${stopped.name}' or earlier`);
  }
  for (const c of children) {
    if (!reused.some((e) => e.name === c.step)) continue;
    const signal = childSignal(c.runId);
    const took = reused.some((e) => e.kind === 'wait' && e.status === 'succeeded' && (e.name === signal || e.name.startsWith(`${signal}#`)));
    if (!took) {
      throw new ValidationError(`runs.fork: step '${c.step}' before '${point.name}' started child run ${c.runId}, whose end only run ${runId} hears; fork from '${c.step}' or earlier (the fork then starts a child of its own)`);
    }
  }
  return { from: { seq: point.seq, name: point.name }, entries: reused };
}

/** A reported step back as a journal entry (a backend that keeps its journal only as step
 *  views: Restate). Completion order is not in a view: it is taken as the order of endedAt
 *  (then position), which is the order the steps completed in but for a tie in one ms
 *  (concurrent steps ending in the same ms come back in position order). */
export function entriesOfViews(steps: readonly StepView[]): JournalEntry[] {
  const ms = (t: string | undefined) => (t === undefined ? undefined : Date.parse(t));
  const entries = steps.map((v): JournalEntry => {
    const e: JournalEntry = { seq: v.seq, name: v.name, kind: v.kind, status: v.status, attempts: v.attempts };
    if (v.result !== undefined) e.result = v.result;
    if (v.error !== undefined) e.error = v.error;
    if (v.startedAt !== undefined) e.startedAt = ms(v.startedAt);
    if (v.endedAt !== undefined) e.endedAt = ms(v.endedAt);
    if (v.wakeAt !== undefined) e.wakeAt = ms(v.wakeAt);
    if (v.nextRetryAt !== undefined) e.nextRetryAt = ms(v.nextRetryAt);
    if (v.retryLimit !== undefined) e.retryLimit = v.retryLimit;
    return e;
  });
  // ctx.now and ctx.random are journaled without an order (their value is returned at once).
  const done = entries.filter((e) => FINAL.has(e.status) && e.endedAt !== undefined && e.kind !== 'now' && e.kind !== 'random').sort((a, b) => a.endedAt! - b.endedAt! || a.seq - b.seq);
  done.forEach((e, i) => (e.order = i + 1));
  return entries;
}
