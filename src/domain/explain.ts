// explain(): a run's state in plain English, from its view alone (pure; `now` is passed in).
// Answers the operator's first questions: what is it waiting for, until when, what failed.
import { flowSkipReason } from './run-flow.ts';
import { describeQueueWait } from './rate-limit.ts';
import { APPROVAL_REQUIRED, approveCommand, shownGrant } from './approval.ts';
import { describeAffinity, parkOf, type Attrs } from './capability.ts';
import { formatDuration } from './duration.ts';
import { retryPlan, type RetryResult } from './retry-point.ts';
import type { RunView, StepView } from './run-view.ts';
import { withControl } from './explain-control.ts';

/** A run's state in plain English (engine.runs.explain, `tranquil why`). */
export interface Explanation {
  runId: string;
  status: RunView['status'];
  /** One or two sentences: what the run is doing or waiting for, or why it ended. */
  summary: string;
  /** One line per notable step, oldest first. */
  details: string[];
  waitingFor?: { kind: 'time' | 'signal' | 'retry' | 'capability' | 'queue'; step: string; until?: string; capability?: string; affinity?: Attrs; queue?: string; key?: string };
  failedStep?: { name: string; attempts: number; error: { name: string; message: string } };
  /** A failed run: what runs.retry (no `from`) would resume from and discard. */
  retry?: RetryResult;
  /** What to do next, with the command that does it (one sentence). */
  next: string;
}

/** What the caller knows of the engine that owns the run's data dir; absent = the caller is
 *  that engine (or cannot tell), and the sentences say nothing about it. The CLI reads it from
 *  the SQLite file's owner row: `none` after a clean stop, `stale` when the owner stopped
 *  heartbeating or its pid is gone. */
export interface EngineContext {
  state: 'alive' | 'none' | 'stale';
  pid?: number;
  host?: string;
  /** The owner's last heartbeat (ISO). */
  heartbeatAt?: string;
}

const NON_DETERMINISM = /diverged from its journal at position (\d+): code now calls ([\s\S]*), journal recorded ([\s\S]*)$/;

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
    case 'retrying': return `step ${s.seq + 1} '${s.name}' attempt ${s.attempts}${s.retryLimit !== undefined ? ` of ${s.retryLimit}` : ''} failed (${s.error?.name}: ${s.error?.message}); next attempt at ${s.nextRetryAt}`;
    case 'sleeping': return `step ${s.seq + 1} '${s.name}' sleeping until ${s.wakeAt}`;
    case 'waiting': return `step ${s.seq + 1} '${s.name}' waiting for signal '${baseName(s.name)}'${s.wakeAt ? ` until ${s.wakeAt}` : ''}`;
    case 'running': return `step ${s.seq + 1} '${s.name}' running`;
    case 'parked': return `step ${s.seq + 1} '${s.name}' parked: ${s.error?.message ?? 'no eligible provider'}`;
  }
}

const baseName = (unique: string): string => unique.replace(/#\d+$/, '');

const quoted = (names: string[]): string =>
  names.length <= 5 ? names.map((n) => `'${n}'`).join(', ') : `${names.slice(0, 5).map((n) => `'${n}'`).join(', ')}, ...`;

function retryHint(r: RetryResult): string {
  if (!r.from) return 'runs.retry runs its code again from the last recorded step (nothing is discarded).';
  const n = r.discarded.length;
  const again = r.discarded[0]?.kind === 'do' || r.discarded[0]?.kind === 'use' ? 'runs again with the same idempotency key' : r.discarded[0]?.kind === 'wait' ? 'waits again, its timeout counted anew' : 'runs again';
  return `runs.retry resumes it from step '${r.from.name}' and discards ${n} recorded step${n === 1 ? '' : 's'} (${quoted(r.discarded.map((d) => d.name))}); ` +
    `'${r.from.name}' ${again}.`;
}

/** A plain workflow's run that a false condition ended (docs/plain-workflows.md): its
 *  output names the step and the condition. */
export function skippedBy(run: Pick<RunView, 'status' | 'output'>): { step: string; condition: string } | undefined {
  const o = run.output as { outcome?: unknown; step?: unknown; condition?: unknown } | null | undefined;
  if (run.status !== 'succeeded' || typeof o !== 'object' || o === null || o.outcome !== 'skipped') return undefined;
  return typeof o.step === 'string' && typeof o.condition === 'string' ? { step: o.step, condition: o.condition } : undefined;
}

export function explain(run: RunView, now: number, engine?: EngineContext): Explanation {
  const e = withControl(explainState(run, now), run, now);
  return heldBy(!engine || engine.state === 'alive' ? e : withoutEngine(e, run, now, engine), run);
}

/** During a drain from SQLite to Restate, which backend holds the run (docs/restate.md). */
function heldBy(e: Explanation, run: RunView): Explanation {
  if (run.heldBy !== 'sqlite') return e;
  return { ...e, summary: `${e.summary} It is held by the SQLite backend of this data dir: started before the switch to Restate, it runs there to the end while new runs start on Restate.` };
}

/** A non-terminal run on a data dir whose engine is gone or stopped answering: what happens
 *  when one starts. Terminal runs need no engine and read the same. */
function withoutEngine(e: Explanation, run: RunView, now: number, engine: EngineContext): Explanation {
  if (['succeeded', 'failed', 'cancelled'].includes(run.status)) return e;
  const head = `Run ${run.runId} of workflow '${run.workflow}' (version ${run.version})`;
  const last = run.steps[run.steps.length - 1];
  const owner = `pid ${engine.pid ?? '?'}${engine.host ? ` on ${engine.host}` : ''}`;
  const beat = engine.heartbeatAt ? `, last heartbeat at ${engine.heartbeatAt} (${formatDuration(Math.max(0, now - Date.parse(engine.heartbeatAt)))} ago)` : '';
  const start = 'Start one: `tranquil serve` (or the app that embeds the engine).';
  if (engine.state === 'stale') {
    const from = last ? `its last recorded step '${last.name}' (${last.status})` : 'its start';
    return {
      ...e,
      summary: `${head} is ${run.status}, held by an engine that stopped answering (${owner}${beat}). ` +
        `The next engine to start on this data dir takes it over and resumes the run from ${from}.`,
      next: `If ${owner} is hung, stop it by its pid, then start an engine: \`tranquil serve\`; the run resumes with the same idempotency keys.`,
    };
  }
  switch (run.status) {
    case 'pending':
      return {
        ...e,
        summary: `${head} is pending because no engine is running on this data dir (created at ${run.createdAt}). ` +
          'The next engine to start picks it up, and catches up every timer and schedule slot that came due while none ran.',
        next: start,
      };
    case 'running':
      return {
        ...e,
        summary: `${head} was running when its engine stopped; no engine is running on this data dir. ` +
          `The next engine to start resumes it from ${last ? `its last recorded step '${last.name}' (${last.status})` : 'its start'}.`,
        next: start,
      };
    default:
      return { ...e, summary: `${e.summary} No engine is running on this data dir: it goes on when one starts (what came due meanwhile runs at start-up).`, next: start };
  }
}

function explainState(run: RunView, now: number): Explanation {
  const steps = run.steps.filter((s) => s.kind !== 'now' && s.kind !== 'random');
  const last = run.steps[run.steps.length - 1];
  const done = steps.filter((s) => s.status === 'succeeded').length;
  const head = `Run ${run.runId} of workflow '${run.workflow}' (version ${run.version})`;
  const base: Explanation = { runId: run.runId, status: run.status, summary: '', details: steps.map(describeStep), next: '' };
  const id = run.runId;
  const cancel = `To stop it: \`tranquil runs cancel ${id}\`.`;

  switch (run.status) {
    case 'succeeded': {
      // Skipped by runs.singleton or runs.rateLimit (run-flow.ts): it ended before any step.
      const flowSkip = run.steps.length === 0 ? flowSkipReason(run.output) : undefined;
      if (flowSkip !== undefined) {
        return {
          ...base,
          summary: `${head} was skipped: ${flowSkip}; none of its code ran (ended at ${run.updatedAt}).`,
          next: `Nothing to do. To run it anyway once the way is clear: \`tranquil run ${run.workflow} --input '<json>'\`.`,
        };
      }
      const skip = skippedBy(run);
      const outcome = skip ? ` with outcome skipped: condition '${skip.condition}' of step '${skip.step}' was false,` : '';
      return {
        ...base,
        summary: `${head} succeeded${outcome} after ${done} completed step${done === 1 ? '' : 's'}, at ${run.updatedAt}.`,
        next: `Nothing to do. Its output and steps: \`tranquil runs describe ${id}\`.`,
      };
    }
    case 'cancelled': {
      // Who asked and when (both backends record a cancel asked through the engine API), when
      // it ended, and where the cancel landed.
      const hit = run.steps.find((s) => s.error?.name === 'CancelledError');
      const c = run.cancel;
      const asked = !c ? `at ${run.updatedAt}` : c.at === run.updatedAt ? `by ${c.by} at ${c.at}` : `by ${c.by} at ${c.at} and ended at ${run.updatedAt}`;
      return {
        ...base,
        summary: `${head} was cancelled ${asked} after ${done} completed step${done === 1 ? '' : 's'}` +
          `${hit ? `; the cancel reached it in step '${hit.name}'` : ''}${c ? '' : '; who asked is not recorded'}.`,
        next: `Nothing to do: a cancelled run stays cancelled. To run the workflow again: \`tranquil run ${run.workflow} --input '<json>'\`.`,
      };
    }
    case 'failed': {
      const err = run.error ?? { name: 'Error', message: 'unknown error' };
      // What runs.retry would do, by the same rule the backends carry out.
      const retry = retryPlan(run.steps)!;
      const point = retry.from && run.steps.find((s) => s.seq === retry.from!.seq);
      const diverged = err.name === 'NonDeterminismError';
      if (diverged) {
        const f = err.fields ?? {};
        const m = NON_DETERMINISM.exec(err.message);
        const position = f.position ?? m?.[1];
        const expected = f.expected ?? m?.[2];
        const recorded = f.recorded ?? m?.[3];
        return {
          ...base,
          retry,
          summary: `${head} failed with non-determinism at position ${position ?? '?'}: the code now calls ${expected ?? '?'}, ` +
            `the journal recorded ${recorded ?? '?'}. The code changed under a run that was in flight.`,
          next: `Run it with the code of version ${run.version} (deploy that version back), or see its journal: \`tranquil runs describe ${id}\`.`,
        };
      }
      const hint = ` ${retryHint(retry)}`;
      const fix = `Fix the cause, then resume it: \`tranquil runs retry ${id}\`.`;
      if (!point) return { ...base, retry, summary: `${head} failed outside any step with ${err.name}: ${err.message}.${hint}`, next: fix };
      const stepError = point.error ?? err;
      const what = point.status === 'timedout'
        ? `step '${point.name}' timed out (${stepError.name}: ${stepError.message})`
        : `step '${point.name}' failed on attempt ${point.attempts} with ${stepError.name}: ${stepError.message}`;
      const same = stepError.name === err.name && stepError.message === err.message;
      return {
        ...base,
        retry,
        failedStep: { name: point.name, attempts: point.attempts, error: stepError },
        summary: `${head} failed${same ? `: ${what}` : ` with ${err.name}: ${err.message}, after ${what}`}.${hint}`,
        next: fix,
      };
    }
    case 'sleeping':
      if (last?.kind === 'sleep' && last.wakeAt) {
        return { ...base, waitingFor: { kind: 'time', step: last.name, until: last.wakeAt }, summary: `${head} is sleeping in step '${last.name}' until ${when(last.wakeAt, now)}.`,
          next: `Nothing to do: it wakes by itself. ${cancel}` };
      }
      break;
    case 'waiting':
      if (last?.kind === 'wait') {
        const until = last.wakeAt;
        return {
          ...base,
          waitingFor: { kind: 'signal', step: last.name, until },
          summary: `${head} is waiting in step '${last.name}' for signal '${baseName(last.name)}'` +
            (until ? `, timing out at ${when(until, now)}` : ', with no timeout') + (last.startedAt ? `; waiting since ${last.startedAt}.` : '.'),
          next: `Send the signal: \`tranquil signal ${id} ${baseName(last.name)} --data '<json>'\`.`,
        };
      }
      break;
    case 'retrying': {
      // The latest retrying step (with steps run concurrently it need not be the last one).
      const r = [...run.steps].reverse().find((s) => s.status === 'retrying');
      if (r) {
        // Every policy has a finite limit (1 to 10,000 attempts); a step journaled before the
        // limit was recorded says so rather than guess it from today's code.
        const of = r.retryLimit !== undefined ? ` of ${r.retryLimit}` : ' (its retry limit was not recorded)';
        return {
          ...base,
          waitingFor: { kind: 'retry', step: r.name, until: r.nextRetryAt },
          summary: `${head} is retrying step '${r.name}': attempt ${r.attempts + 1}${of} at ${r.nextRetryAt ? when(r.nextRetryAt, now) : 'once resumed'}; ` +
            `last error (attempt ${r.attempts}): ${r.error?.name}: ${r.error?.message}.`,
          next: `Nothing to do: the next attempt runs by itself. ${cancel}`,
        };
      }
      break;
    }
    case 'parked': {
      const parkedStep = [...run.steps].reverse().find((s) => s.status === 'parked');
      const park = parkOf(parkedStep?.error);
      if (parkedStep && park) {
        return {
          ...base,
          waitingFor: { kind: 'capability', step: parkedStep.name, capability: park.capability, affinity: park.affinity },
          summary: `${head} is parked in step '${parkedStep.name}': it waits for a provider of capability '${park.capability}' ` +
            `matching ${describeAffinity(park.affinity)}; it resumes as soon as one is provided (engine.capabilities.provide).`,
          // Nothing to run from a shell: a provider lives in the app (docs/host.md).
          next: `Provide it in the app: \`engine.capabilities.provide('${park.capability}', ${JSON.stringify(park.affinity)}, handler)\` ` +
            `(or \`capabilities.provide\` on an attach() handle). To stop it: \`tranquil runs cancel ${id}\`.`,
        };
      }
      break;
    }
    case 'pending':
      if (run.queued && run.queued.step === '') {
        const q = run.queued;
        return { ...base, waitingFor: { kind: 'queue', step: '', queue: q.queue, key: q.key }, summary: `${head} is pending: ${describeQueueWait(q)}.`, next: `Nothing to do: it starts when a slot of '${q.queue}' frees up (runs of '${run.workflow}' hold one from start to end). ${cancel}` };
      }
      return { ...base, summary: `${head} is pending: created at ${run.createdAt}, not yet picked up by the engine.`, next: 'Nothing to do: the engine starts it shortly.' };
    case 'running':
      if (run.queued) {
        const q = run.queued;
        return { ...base, waitingFor: { kind: 'queue', step: q.step, queue: q.queue, key: q.key }, summary: `${head} is running; ${q.step === '' ? 'the run (its own slot)' : `step '${q.step}'`} is ${describeQueueWait(q)}.`, next: `Nothing to do: it starts when a slot of '${q.queue}' frees up. ${cancel}` };
      }
      return { ...base, summary: `${head} is running${last ? `; last recorded step: '${last.name}' (${last.status})` : ''}.`, next: `Nothing to do. ${cancel}` };
    case 'blocked':
      if (run.error?.name === APPROVAL_REQUIRED) {
        // A workflow file waiting for its declaration to be approved: the change and the command.
        const f = run.error.fields ?? {};
        const paths = f.paths !== null && typeof f.paths === 'object' ? (f.paths as Record<string, string>) : undefined;
        const list = (v: unknown) => (Array.isArray(v) && v.length ? v.map((g) => shownGrant(String(g), paths)).join(', ') : 'nothing');
        const approve = typeof f.approve === 'string' ? f.approve : approveCommand(run.workflow);
        return {
          ...base,
          next: `Review the change (docs/runner.md, Approval), then approve it: \`${approve}\`; the run starts.`,
          summary: `${head} is blocked until its permission declaration is approved: ${run.error.message}`,
          details: [`added: ${list(f.added)}`, `removed: ${list(f.removed)}`, `approve with: ${typeof f.approve === 'string' ? f.approve : approveCommand(run.workflow)}`, ...base.details],
        };
      }
      return {
        ...base,
        summary: `${head} is blocked: its workflow is not registered with this engine, or the backend stopped retrying it` +
          `${run.error ? ` (${run.error.name}: ${run.error.message})` : ''}; it needs an operator.`,
        next: `Register workflow '${run.workflow}' with the engine (its config or workflows dir), then restart it: \`tranquil serve\`.`,
      };
  }
  // States whose step record does not match the usual shape get the plain status line.
  return { ...base, summary: `${head} is ${run.status}${run.wakeAt ? ` until ${when(run.wakeAt, now)}` : ''}.`, next: `See its steps: \`tranquil runs describe ${id}\`.` };
}
