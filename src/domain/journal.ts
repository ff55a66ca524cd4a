// A run's journal as the pure core sees it: one entry per step call, indexed by seq (a hole
// where a step was called but nothing is recorded yet).
import type { ErrorInfo } from './errors.ts';
import type { Json } from './json.ts';
import type { StepKind, StepStatus, StepView } from './run-view.ts';
import { isoTime } from './iso-time.ts';

export interface JournalEntry {
  seq: number;
  /** Unique within the run (`name#k` for repeats). */
  name: string;
  kind: StepKind;
  status: StepStatus;
  attempts: number;
  result?: Json;
  error?: ErrorInfo;
  startedAt?: number;
  endedAt?: number;
  /** sleep: when it is due; wait: its deadline (absent = no timeout). */
  wakeAt?: number;
  nextRetryAt?: number;
  /** A retrying step: the attempt limit of its retry policy (total attempts, the first
   *  included), so `why` can say "attempt n of m". Absent on other statuses and on steps
   *  journaled before it was recorded. */
  retryLimit?: number;
  /** When it completed relative to the run's other steps (larger = later; gaps allowed).
   *  Steps called concurrently complete in any order; replay hands results back in this
   *  order. Absent: not completed, or no order (ctx.now/random, emit, older journals). */
  order?: number;
}

// isoTime, not Date#toISOString, which looks up the local time zone through ICU (iso-time.ts).
const iso = isoTime;

/** The reported shape of an entry, identical on every backend. */
export function toStepView(e: JournalEntry): StepView {
  const v: StepView = { seq: e.seq, name: e.name, kind: e.kind, status: e.status, attempts: e.attempts };
  if (e.result !== undefined) v.result = e.result;
  if (e.error !== undefined) v.error = e.error;
  if (e.startedAt !== undefined) v.startedAt = iso(e.startedAt);
  if (e.endedAt !== undefined) v.endedAt = iso(e.endedAt);
  if (e.nextRetryAt !== undefined) v.nextRetryAt = iso(e.nextRetryAt);
  if (e.wakeAt !== undefined) v.wakeAt = iso(e.wakeAt);
  if (e.retryLimit !== undefined) v.retryLimit = e.retryLimit;
  return v;
}

/** The last time the journal recorded anything happening (a step starting or ending); 0 for
 *  an empty one. A replay of a finished journal reads its clock here: a time the run has
 *  reached, so what it recorded as due is due and a cancel's grace counts from its delivery
 *  as recorded (a clock at 0 read the grace left as ~56 years). */
export function lastRecordedAt(entries: readonly (JournalEntry | undefined)[]): number {
  let last = 0;
  for (const e of entries) {
    if (!e) continue;
    if (e.startedAt !== undefined && e.startedAt > last) last = e.startedAt;
    if (e.endedAt !== undefined && e.endedAt > last) last = e.endedAt;
  }
  return last;
}
