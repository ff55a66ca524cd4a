// Replay decision: a pure function of (journal, the step call the code makes now, the time).
// The executor interprets the decision; nothing here touches storage or clocks.
import type { JournalEntry } from './journal.ts';
import type { StepKind } from './run-view.ts';

export interface StepCall {
  seq: number;
  kind: StepKind;
  name: string;
}

export type Decision =
  /** Recorded and finished: hand back the recorded result or error. */
  | { type: 'replay'; entry: JournalEntry }
  /** Not recorded yet (or due for its next attempt): run it. */
  | { type: 'execute'; attempt: number; entry?: JournalEntry }
  /** A sleep whose time has come: record it finished and go on. */
  | { type: 'wake'; entry: JournalEntry }
  /** A wait still open: look for a signal, else time out at the deadline, else suspend. */
  | { type: 'await'; entry: JournalEntry }
  /** Not due yet: suspend until `until`. */
  | { type: 'suspend'; status: 'sleeping' | 'retrying'; until: number; entry: JournalEntry }
  | { type: 'diverged'; position: number; expected: string; recorded: string };

export const describeCall = (c: { kind: StepKind; name: string }): string => `${c.kind} '${c.name}'`;

export function decide(journal: readonly JournalEntry[], call: StepCall, now: number): Decision {
  const entry = journal[call.seq];
  if (!entry) return { type: 'execute', attempt: 1 };
  if (entry.kind !== call.kind || entry.name !== call.name) {
    return { type: 'diverged', position: call.seq, expected: describeCall(call), recorded: describeCall(entry) };
  }
  switch (entry.status) {
    case 'succeeded':
    case 'failed':
    case 'timedout':
      return { type: 'replay', entry };
    case 'retrying':
      return entry.nextRetryAt !== undefined && entry.nextRetryAt > now
        ? { type: 'suspend', status: 'retrying', until: entry.nextRetryAt, entry }
        : { type: 'execute', attempt: entry.attempts + 1, entry };
    case 'running':
      // An attempt that began but never recorded an outcome: run it again, same key.
      return { type: 'execute', attempt: Math.max(1, entry.attempts), entry };
    case 'sleeping':
      return entry.wakeAt !== undefined && entry.wakeAt > now
        ? { type: 'suspend', status: 'sleeping', until: entry.wakeAt, entry }
        : { type: 'wake', entry };
    case 'waiting':
      return { type: 'await', entry };
    case 'parked':
      // A capability step that found no provider: look again (the park was not an attempt).
      return { type: 'execute', attempt: entry.attempts + 1, entry };
  }
}

/** The code returned: any recorded entry beyond `position` means the code changed. */
export function decideFinish(
  journal: readonly JournalEntry[],
  position: number,
): { type: 'done' } | { type: 'diverged'; position: number; expected: string; recorded: string } {
  // Indexed by seq, possibly with holes: any entry at or past the position counts.
  const extra = journal.slice(position).find((e) => e !== undefined);
  if (!extra) return { type: 'done' };
  return { type: 'diverged', position, expected: 'the run to finish', recorded: describeCall(extra) };
}

/** What a log that journals positions as it goes (Restate) found at a position: a step,
 *  or the end of the run. */
export interface RecordedStep {
  kind: StepKind | 'end';
  name: string;
}

const describeRecorded = (r: RecordedStep): string => (r.kind === 'end' ? 'the run finishing' : describeCall({ kind: r.kind, name: r.name }));

/** The code now makes `call` at call.seq (kind 'end': the code returned there); a different
 *  record at that position means the code changed. */
export function decideRecorded(
  call: { seq: number; kind: StepKind | 'end'; name: string },
  recorded: RecordedStep,
): { type: 'diverged'; position: number; expected: string; recorded: string } | undefined {
  if (recorded.kind === call.kind && (call.kind === 'end' || recorded.name === call.name)) return undefined;
  const expected = call.kind === 'end' ? 'the run to finish' : describeCall({ kind: call.kind, name: call.name });
  return { type: 'diverged', position: call.seq, expected, recorded: describeRecorded(recorded) };
}
