// The pre-deploy replay check (`tranquil check`, docs/data.md): replays an in-flight run's
// journal against new workflow code through the ONE RunSession, over a step log that never
// executes a step body, never records, never publishes. Where the code reaches work the
// journal has not recorded yet (the run's frontier) the replay stops: everything before it
// matched. A run whose code now calls a different step, a different kind, or finishes while
// recorded steps remain is reported with the session's own NonDeterminismError terms.
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';
import type { RunView, StepView } from '../domain/run-view.ts';
import type { RunReader } from '../ports/run-reader.ts';
import type { StepLog } from '../ports/step-log.ts';
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import { RunSession } from './run-session.ts';

/** A replay check's answer (replayFixture, `tranquil dev`): `ok` with how far the replay got
 *  (`frontier`: to work not yet recorded; `suspended`: to a sleep or wait; `end`: the run's
 *  end), or not, with why (and for a divergence, the position and both calls). */
export type CheckVerdict =
  | { runId: string; workflow: string; ok: true; reached: 'frontier' | 'suspended' | 'end' }
  | { runId: string; workflow: string; ok: false; position?: number; expected?: string; recorded?: string; message: string };

/** Thrown into the session where new work would begin: the replay stops there. */
class Frontier extends Error {}

const ms = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : Date.parse(iso));

/** A reported step back in journal form (both backends report steps the same way). */
export function entryOf(s: StepView): JournalEntry {
  const e: JournalEntry = { seq: s.seq, name: s.name, kind: s.kind, status: s.status, attempts: s.attempts };
  if (s.result !== undefined) e.result = s.result;
  if (s.error !== undefined) e.error = s.error;
  if (s.retryLimit !== undefined) e.retryLimit = s.retryLimit;
  const t = { startedAt: ms(s.startedAt), endedAt: ms(s.endedAt), wakeAt: ms(s.wakeAt), nextRetryAt: ms(s.nextRetryAt) };
  for (const [k, v] of Object.entries(t)) if (v !== undefined) (e as unknown as Record<string, number>)[k] = v;
  return e;
}

function dryLog(run: RunView, now: number): StepLog {
  const entries: JournalEntry[] = [];
  for (const s of run.steps) entries[s.seq] = entryOf(s);
  const stop = () => Promise.reject(new Frontier('frontier'));
  return {
    runId: run.runId,
    workflow: run.workflow,
    input: structuredClone(run.input) as Json,
    entries,
    now: () => now,
    random: () => 0.5,
    attempt: () => stop(), // never runs a body: new work is the frontier
    record: async () => {},
    takeSignal: async () => undefined,
    emit: () => stop(),
    cancelRequested: () => false,
  };
}

/** Replays one run against `def`; bounded by `timeoutMs` for code that awaits something
 *  other than a step. */
export async function checkRun(def: WorkflowDefinition, run: RunView, now = Date.now(), timeoutMs = 5_000): Promise<CheckVerdict> {
  const base = { runId: run.runId, workflow: run.workflow };
  const session = new RunSession(dryLog(run, now), def.fn, def.stepDefaults);
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    session.run(),
    new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs))),
  ]).finally(() => clearTimeout(timer));
  if (outcome === 'timeout') return { ...base, ok: false, message: `replay did not reach a step or the end within ${timeoutMs}ms` };
  switch (outcome.type) {
    case 'interrupted':
      if (outcome.cause instanceof Frontier) return { ...base, ok: true, reached: 'frontier' };
      return { ...base, ok: false, message: `replay stopped: ${(outcome.cause as Error)?.message ?? outcome.cause}` };
    case 'suspended':
      return { ...base, ok: true, reached: 'suspended' };
    case 'succeeded':
    case 'cancelled':
      return { ...base, ok: true, reached: 'end' };
    case 'failed': {
      const f = outcome.error.fields as { position?: number; expected?: string; recorded?: string } | undefined;
      if (outcome.error.name === 'NonDeterminismError') return { ...base, ok: false, position: f?.position, expected: f?.expected, recorded: f?.recorded, message: outcome.error.message };
      // An in-flight run whose code now throws on replay would fail once deployed.
      return { ...base, ok: false, message: `replay fails: ${outcome.error.name}: ${outcome.error.message}` };
    }
  }
}

/** Statuses of runs that will replay against new code. */
const IN_FLIGHT = ['pending', 'running', 'sleeping', 'waiting', 'retrying', 'parked', 'blocked'] as const;

/** Every in-flight run of the given workflows, replayed against their new definitions. */
export async function checkInFlight(reader: RunReader, defs: readonly WorkflowDefinition[], now = Date.now()): Promise<CheckVerdict[]> {
  const out: CheckVerdict[] = [];
  for (const def of defs) {
    for (const status of IN_FLIGHT) {
      let cursor: string | undefined;
      do {
        const page = await reader.listRuns({ status, workflow: def.name, limit: 500, cursor });
        for (const r of page.runs) {
          const full = await reader.getRun(r.runId);
          if (full) out.push(await checkRun(def, full, now));
        }
        cursor = page.next;
      } while (cursor !== undefined);
    }
  }
  return out;
}
