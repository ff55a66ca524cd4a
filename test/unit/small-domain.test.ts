import { describe, expect, it } from 'vitest';
import { parseDuration, formatDuration } from '../../src/domain/duration.ts';
import { StepNamer, idempotencyKey } from '../../src/domain/step-names.ts';
import { canTransition, RUN_STATUSES, isTerminal } from '../../src/domain/run-status.ts';
import { fromErrorInfo, toErrorInfo, TerminalError, TimeoutError } from '../../src/domain/errors.ts';
import { roundTrip } from '../../src/domain/json.ts';
import { eventRunId } from '../../src/domain/ids.ts';

describe('durations', () => {
  it.each([[250, 250], ['250ms', 250], ['30s', 30_000], ['15m', 900_000], ['48h', 172_800_000], ['7d', 604_800_000], ['1h30m', 5_400_000], [-5, -5], [0, 0]] as const)(
    '%s -> %i ms', (input, ms) => expect(parseDuration(input)).toBe(ms),
  );
  it.each(['', '10', '5 minutes', '3x', 'h', '1h 30m'])('rejects %j naming the field', (bad) => {
    expect(() => parseDuration(bad, 'timeout')).toThrow(/^timeout: /);
  });
  it('rejects non-finite numbers', () => expect(() => parseDuration(Infinity)).toThrow(/finite/));
  it('formats for humans', () => expect(formatDuration(90_061_000)).toBe('1d 1h'));
});

describe('step names and keys', () => {
  it('numbers repeats name#2, name#3 and keys them per run', () => {
    const n = new StepNamer();
    expect([n.next('a'), n.next('b'), n.next('a'), n.next('a')]).toEqual(['a', 'b', 'a#2', 'a#3']);
    expect(idempotencyKey('r1', 'a#2')).toBe('r1/a#2');
  });
  it('rejects empty names', () => expect(() => new StepNamer().next('')).toThrow(/non-empty/));
});

describe('run state machine', () => {
  it('terminal states have no way out except failed -> pending (retry)', () => {
    for (const s of RUN_STATUSES.filter(isTerminal)) {
      const exits = RUN_STATUSES.filter((t) => canTransition(s, t));
      expect(exits).toEqual(s === 'failed' ? ['pending'] : []);
    }
  });
  it('suspended states resume to running or are cancelled', () => {
    for (const s of ['sleeping', 'waiting', 'retrying'] as const) {
      expect(canTransition(s, 'running')).toBe(true);
      expect(canTransition(s, 'cancelled')).toBe(true);
      expect(canTransition(s, 'succeeded')).toBe(false);
    }
  });
});

describe('errors across boundaries', () => {
  it('keep their class by name', () => {
    expect(fromErrorInfo(toErrorInfo(new TerminalError('x')))).toBeInstanceOf(TerminalError);
    expect(fromErrorInfo(toErrorInfo(new TimeoutError('x')))).toBeInstanceOf(TimeoutError);
    const other = fromErrorInfo(toErrorInfo(new RangeError('r')));
    expect([other.name, other.message]).toEqual(['RangeError', 'r']);
  });
  it('non-Error values keep their text', () => {
    expect(toErrorInfo('plain')).toEqual({ name: 'Error', message: 'plain' });
    expect(toErrorInfo({ code: 7 })).toEqual({ name: 'Error', message: '{"code":7}' });
  });
});

describe('json round trip', () => {
  it('is what replay will see', () => expect(roundTrip({ d: new Date(0), u: undefined }, 'x')).toEqual({ d: '1970-01-01T00:00:00.000Z' }));
  it('names what failed', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => roundTrip(cyclic, "result of step 'x'")).toThrow(/result of step 'x' is not JSON-serialisable/);
    expect(() => roundTrip(NaN, 'v')).toThrow(/non-finite/);
  });
});

describe('event run ids', () => {
  it('are deterministic per (event id, workflow) and distinct otherwise', () => {
    expect(eventRunId('e1', 'w')).toBe(eventRunId('e1', 'w'));
    expect(eventRunId('e1', 'w')).not.toBe(eventRunId('e1', 'v'));
    expect(eventRunId('e1', 'w')).not.toBe(eventRunId('e2', 'w'));
  });
});
