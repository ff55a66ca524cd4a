import { describe, expect, it } from 'vitest';
import { parseDuration, formatDuration, MAX_DURATION_MS } from '../../src/domain/duration.ts';
import { StepNamer, idempotencyKey } from '../../src/domain/step-names.ts';
import { canTransition, RUN_STATUSES, isTerminal } from '../../src/domain/run-status.ts';
import { ERROR_FIELDS_MAX_CHARS, fromErrorInfo, toErrorInfo, TerminalError, TimeoutError, ValidationError } from '../../src/domain/errors.ts';
import { humanBytes, oversize, roundTrip, toJsonText } from '../../src/domain/json.ts';
import { encodeValue } from '../../src/domain/value-codec.ts';
import { eventRunId } from '../../src/domain/ids.ts';

describe('durations', () => {
  it.each([[250, 250], ['250ms', 250], ['30s', 30_000], ['15m', 900_000], ['48h', 172_800_000], ['7d', 604_800_000], ['1h30m', 5_400_000], [-5, -5], [0, 0]] as const)(
    '%s -> %i ms', (input, ms) => expect(parseDuration(input)).toBe(ms),
  );
  it.each(['', '10', '5 minutes', '3x', 'h', '1h 30m'])('rejects %j naming the field', (bad) => {
    expect(() => parseDuration(bad, 'timeout')).toThrow(/^timeout: /);
  });
  it('rejects non-finite numbers', () => expect(() => parseDuration(Infinity)).toThrow(/finite/));
  it('accepts up to 100 years either way, refuses longer (also digit strings that parse to Infinity)', () => {
    expect(parseDuration('36525d')).toBe(MAX_DURATION_MS);
    expect(parseDuration(-MAX_DURATION_MS)).toBe(-MAX_DURATION_MS);
    for (const bad of ['36526d', MAX_DURATION_MS + 1, -MAX_DURATION_MS - 1, `1${'0'.repeat(400)}d`]) {
      expect(() => parseDuration(bad, 'timeout')).toThrow(/^timeout: .* is longer than 100 years \(36525d\), the longest duration accepted$/);
    }
  });
  it('formats for humans', () => expect(formatDuration(90_061_000)).toBe('1d 1h'));
});

describe('step names and keys', () => {
  it('numbers repeats name#2, name#3 and keys them per run', () => {
    const n = new StepNamer();
    expect([n.next('a'), n.next('b'), n.next('a'), n.next('a')]).toEqual(['a', 'b', 'a#2', 'a#3']);
    expect(idempotencyKey('r1', 'a#2')).toBe('r1/a#2');
  });
  it('counts names that are Object.prototype members like any other', () => {
    const n = new StepNamer();
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '0'];
    expect(names.map((x) => n.next(x))).toEqual(names);
    expect(names.map((x) => n.next(x))).toEqual(names.map((x) => `${x}#2`));
  });
  it('rejects empty names', () => expect(() => new StepNamer().next('')).toThrow(/non-empty/));
  it("refuses '#' in a name, so no name equals a repeat's automatic name", () => {
    const n = new StepNamer();
    expect(n.next('charge')).toBe('charge');
    expect(() => n.next('charge#2')).toThrow(ValidationError);
    expect(() => n.next('a#b')).toThrow(/^step name 'a#b' contains '#', which is reserved for repeated names/);
    expect(n.next('charge')).toBe('charge#2'); // a refused name was not counted
  });
});

describe('run state machine', () => {
  it('terminal states have no way out except failed or cancelled -> pending (retry, resume)', () => {
    for (const s of RUN_STATUSES.filter(isTerminal)) {
      const exits = RUN_STATUSES.filter((t) => canTransition(s, t));
      // runs.retry (failed) and runs.resume (cancelled, docs/control.md) make a run pending again.
      expect(exits).toEqual(s === 'succeeded' ? [] : ['pending']);
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
  it('own fields the value codec keeps, and the cause, come back on the rebuilt error', () => {
    const cause = Object.assign(new TypeError('socket hang up'), { code: 'ECONNRESET', errno: -104 });
    const err = Object.assign(new TerminalError('upstream 503'), { code: 'E_HTTP', status: 503, details: { a: [1, 'x'] }, at: new Date(0) });
    Object.defineProperty(err, 'cause', { value: cause }); // as `new Error(m, { cause })` sets it: own, not enumerable
    const info = toErrorInfo(err);
    expect(info).toEqual({
      name: 'TerminalError', message: 'upstream 503', fields: { code: 'E_HTTP', status: 503, details: { a: [1, 'x'] }, at: encodeValue(new Date(0), 'at').stored },
      cause: { name: 'TypeError', message: 'socket hang up', fields: { code: 'ECONNRESET', errno: -104 } },
    });
    const back = fromErrorInfo(JSON.parse(JSON.stringify(info))) as TerminalError & { code?: string; status?: number; cause?: Error & { code?: string } };
    expect(back).toBeInstanceOf(TerminalError);
    expect([back.code, back.status, back.cause?.message, back.cause?.name, back.cause?.code]).toEqual(['E_HTTP', 503, 'socket hang up', 'TypeError', 'ECONNRESET']);
    expect((back as unknown as { at: unknown }).at).toEqual(new Date(0)); // a Date again (docs/values.md)
    expect(Object.getOwnPropertyDescriptor(back, 'cause')?.enumerable).toBe(false); // as `new Error(m, { cause })` sets it
    expect(toErrorInfo(back)).toEqual(info); // stable across any number of round trips
  });
  it('drops fields the value codec cannot keep, the transport objects of HTTP clients, and what passes the 4 KiB budget', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    class Agent {}
    const err = Object.assign(new Error('x'), {
      fn: () => 1, agent: new Agent(), big: 1n, nan: NaN, circular, map: new Map(), config: { headers: { authorization: 'secret' } }, request: {}, response: {},
      huge: 'h'.repeat(ERROR_FIELDS_MAX_CHARS), small: 's',
    });
    const info = toErrorInfo(err);
    expect(Object.keys(info.fields ?? {})).toEqual(['big', 'nan', 'circular', 'map', 'small']);
    const back = fromErrorInfo(JSON.parse(JSON.stringify(info))) as unknown as Record<string, unknown>;
    expect([back.big, back.nan, back.map, (back.circular as Record<string, unknown>).self === back.circular]).toEqual([1n, NaN, new Map(), true]);
    const long = toErrorInfo(new Error('x', { cause: new Error('c'.repeat(5000)) }));
    expect(long.cause?.message).toHaveLength(1024);
    expect(toErrorInfo(new Error('plain'))).toEqual({ name: 'Error', message: 'plain' }); // no empty fields
  });
  it('non-Error values keep their text', () => {
    expect(toErrorInfo('plain')).toEqual({ name: 'Error', message: 'plain' });
    expect(toErrorInfo({ code: 7 })).toEqual({ name: 'Error', message: '{"code":7}' });
  });
});

describe('json round trip', () => {
  it('is what replay will see', () => expect(roundTrip({ d: new Date(0), u: undefined }, 'x')).toEqual({ d: '1970-01-01T00:00:00.000Z' }));
  it('with a byte limit, refuses larger JSON naming what and both sizes', () => {
    expect(roundTrip('é'.repeat(10), 'x', 22)).toBe('é'.repeat(10)); // 20 bytes + 2 quotes
    expect(() => roundTrip('é'.repeat(10), 'result of step \'s\'', 21)).toThrow(
      "result of step 's' is 22 bytes of JSON (0 KiB), over the limit of 21 bytes (0 KiB, engine config maxPayloadBytes)",
    );
    expect(oversize('a'.repeat(100), 300)).toBeUndefined(); // short text is not measured
    expect(oversize('€'.repeat(200), 300)).toBe(600);
    expect(humanBytes(16 * 1024 * 1024)).toBe('16 MiB');
    expect(humanBytes(16 * 1024 * 1024 + 3)).toBe('16.0 MiB');
  });
  it('names what failed', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => roundTrip(cyclic, "result of step 'x'")).toThrow(/result of step 'x' is not JSON-serialisable/);
    expect(() => roundTrip(NaN, 'v')).toThrow(/non-finite/);
  });
  it('plain data and data with converted or refused parts give the text JSON gives, or the refusal, at any depth', () => {
    const deep = (v: unknown, n: number): unknown => (n === 0 ? v : { a: [deep(v, n - 1)] });
    // Plain data (the fast path) is exactly JSON.stringify's text.
    const plain = { s: 'é"\n', n: -1.5e300, b: false, z: null, u: undefined, arr: [1, undefined, 'x', [[]]], o: Object.create(null) as object };
    expect(toJsonText(plain, 'v')).toBe(JSON.stringify(plain));
    expect(toJsonText(deep(1, 100), 'v')).toBe(JSON.stringify(deep(1, 100)));
    // Converted parts, anywhere, as JSON converts them.
    expect(toJsonText(deep(new Date(0), 3), 'v')).toBe(JSON.stringify(deep('1970-01-01T00:00:00.000Z', 3)));
    expect(toJsonText({ t: { toJSON: () => 'x' } }, 'v')).toBe('{"t":"x"}');
    class Point { constructor(readonly x: number) {} }
    expect(toJsonText([new Point(1)], 'v')).toBe('[{"x":1}]');
    // Refused parts, at any depth, including past the fast check's depth and inside what a
    // toJSON returns (an array subclass's own toJSON included).
    for (const bad of [() => 1, Symbol('s'), NaN, Infinity, BigInt(1)]) {
      expect(() => toJsonText(deep(bad, 2), 'v')).toThrow(/v is not JSON-serialisable/);
      expect(() => toJsonText(deep(bad, 70), 'v')).toThrow(/v is not JSON-serialisable/);
    }
    class Listy extends Array { toJSON() { return { f: () => 1 }; } }
    expect(() => toJsonText({ l: Listy.from([1]) }, 'v')).toThrow(/function value/);
    expect(() => toJsonText({ t: { toJSON: () => NaN } }, 'v')).toThrow(/non-finite/);
    const cyclic: unknown[] = [];
    cyclic.push({ c: cyclic });
    expect(() => toJsonText(cyclic, 'v')).toThrow(/v is not JSON-serialisable/);
  });
});

describe('event run ids', () => {
  it('are deterministic per (event id, workflow) and distinct otherwise', () => {
    expect(eventRunId('e1', 'w')).toBe(eventRunId('e1', 'w'));
    expect(eventRunId('e1', 'w')).not.toBe(eventRunId('e1', 'v'));
    expect(eventRunId('e1', 'w')).not.toBe(eventRunId('e2', 'w'));
  });
});
