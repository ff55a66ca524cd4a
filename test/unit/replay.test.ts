import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/domain/journal.ts';
import { decide, decideFinish, type Decision, type StepCall } from '../../src/domain/replay.ts';

const e = (p: Partial<JournalEntry> & Pick<JournalEntry, 'seq' | 'name' | 'kind' | 'status'>): JournalEntry => ({ attempts: 1, ...p });
const NOW = 1_000_000;

const cases: { title: string; journal: JournalEntry[]; call: StepCall; expected: Decision['type']; extra?: Record<string, unknown> }[] = [
  { title: 'empty journal executes attempt 1', journal: [], call: { seq: 0, kind: 'do', name: 'a' }, expected: 'execute', extra: { attempt: 1 } },
  { title: 'recorded success replays', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'succeeded', result: 1 })], call: { seq: 0, kind: 'do', name: 'a' }, expected: 'replay' },
  { title: 'recorded failure replays', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'failed' })], call: { seq: 0, kind: 'do', name: 'a' }, expected: 'replay' },
  { title: 'beyond the journal executes', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'succeeded' })], call: { seq: 1, kind: 'do', name: 'b' }, expected: 'execute' },
  { title: 'different name diverges', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'succeeded' })], call: { seq: 0, kind: 'do', name: 'b' }, expected: 'diverged', extra: { position: 0, expected: "do 'b'", recorded: "do 'a'" } },
  { title: 'different kind diverges', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'succeeded' })], call: { seq: 0, kind: 'sleep', name: 'a' }, expected: 'diverged', extra: { recorded: "do 'a'", expected: "sleep 'a'" } },
  { title: 'retry not yet due suspends', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'retrying', attempts: 2, nextRetryAt: NOW + 5 })], call: { seq: 0, kind: 'do', name: 'a' }, expected: 'suspend', extra: { status: 'retrying', until: NOW + 5 } },
  { title: 'retry due executes the next attempt', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'retrying', attempts: 2, nextRetryAt: NOW })], call: { seq: 0, kind: 'do', name: 'a' }, expected: 'execute', extra: { attempt: 3 } },
  { title: 'operator retry (no nextRetryAt) executes', journal: [e({ seq: 0, name: 'a', kind: 'do', status: 'retrying', attempts: 0 })], call: { seq: 0, kind: 'do', name: 'a' }, expected: 'execute', extra: { attempt: 1 } },
  { title: 'sleep not due suspends', journal: [e({ seq: 0, name: 's', kind: 'sleep', status: 'sleeping', wakeAt: NOW + 1 })], call: { seq: 0, kind: 'sleep', name: 's' }, expected: 'suspend', extra: { status: 'sleeping' } },
  { title: 'sleep due wakes', journal: [e({ seq: 0, name: 's', kind: 'sleep', status: 'sleeping', wakeAt: NOW })], call: { seq: 0, kind: 'sleep', name: 's' }, expected: 'wake' },
  { title: 'open wait awaits', journal: [e({ seq: 0, name: 'w', kind: 'wait', status: 'waiting' })], call: { seq: 0, kind: 'wait', name: 'w' }, expected: 'await' },
  { title: 'timed-out wait replays', journal: [e({ seq: 0, name: 'w', kind: 'wait', status: 'timedout' })], call: { seq: 0, kind: 'wait', name: 'w' }, expected: 'replay' },
];

describe('decide(journal, call, now)', () => {
  it.each(cases)('$title', ({ journal, call, expected, extra }) => {
    const d = decide(journal, call, NOW);
    expect(d.type).toBe(expected);
    if (extra) expect(d).toMatchObject(extra);
  });
});

describe('decideFinish', () => {
  it('is done when the code consumed the whole journal', () => {
    expect(decideFinish([e({ seq: 0, name: 'a', kind: 'do', status: 'succeeded' })], 1)).toEqual({ type: 'done' });
  });
  it('diverges when recorded steps remain', () => {
    expect(decideFinish([e({ seq: 0, name: 'a', kind: 'do', status: 'succeeded' })], 0)).toEqual({
      type: 'diverged', position: 0, expected: 'the run to finish', recorded: "do 'a'",
    });
  });
});
