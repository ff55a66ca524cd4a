// The engine config's optional sections (deno, webhook, log, retention, encryption, restate)
// are checked by their own schemas only when given (compose/config.ts, `section`): the start
// skips building the rest. What a user relies on must not change: an absent section resolves
// to undefined, a given one is checked in full with its one-line message, and a wrong value
// in place of a section is refused, never taken for "absent".
import { expect, it } from 'vitest';
import { resolveConfig } from '../../compose/config.ts';
import { ValidationError } from '../../src/domain/errors.ts';

const SECTIONS = ['deno', 'webhook', 'log', 'retention', 'encryption', 'restate'] as const;

it('absent sections resolve to undefined; unknown keys are still refused', () => {
  const c = resolveConfig({ dataDir: './d' }, {});
  for (const s of SECTIONS) expect(c[s]).toBeUndefined();
  expect(resolveConfig({ dataDir: './d', deno: undefined }, {}).deno).toBeUndefined();
  expect(() => resolveConfig({ dataDir: './d', denoo: {} }, {})).toThrow(/denoo/);
});

it('a given section is checked in full, with defaults applied', () => {
  expect(resolveConfig({ webhook: {} }, {}).webhook).toEqual({ host: '127.0.0.1', port: 0, bodyLimitBytes: 1024 * 1024, listen: true });
  expect(resolveConfig({ log: {} }, {}).log).toEqual({ level: 'warn', format: 'text' });
  expect(resolveConfig({ retention: { maxAge: '2d' } }, {}).retention).toEqual({ maxAge: 2 * 86_400_000 });
  const bad: [string, unknown, RegExp][] = [
    ['deno', { heartbeatInterval: 5000, heartbeatTimeout: 1000 }, /heartbeatTimeout must be longer/],
    ['deno', { maxFileBytes: 10 }, /deno\.maxFileBytes/],
    ['deno', { maxFileBytes: 1.5e6 + 0.5 }, /deno\.maxFileBytes/],
    ['deno', { maxWriteBytes: 1024 }, /deno\.maxWriteBytes/],
    ['webhook', { port: 70_000 }, /webhook\.port/],
    ['log', { level: 'loud' }, /log\.level/],
    ['retention', { maxAge: 'soon' }, /retention\.maxAge/],
    ['encryption', { keyEnv: '1BAD' }, /encryption\.keyEnv/],
    ['restate', { ingressUrl: 'not a url' }, /restate\.ingressUrl/],
  ];
  for (const [key, value, message] of bad) {
    let err: unknown;
    try {
      resolveConfig({ [key]: value }, {});
    } catch (e) {
      err = e;
    }
    expect(err, key).toBeInstanceOf(ValidationError);
    expect((err as Error).message, key).toMatch(message);
    expect((err as Error).message.split('\n'), key).toHaveLength(1);
  }
});

it.each(SECTIONS)('%s: null, a string or a number in place of the section is refused', (key) => {
  for (const value of [null, 'yes', 1, false]) expect(() => resolveConfig({ [key]: value }, {}), `${key}: ${String(value)}`).toThrow(new RegExp(`engine config\\.${key}`));
});

it('a config whose section throws when read is a ValidationError, not the throw itself', () => {
  const input = Object.defineProperty({ dataDir: './d' }, 'restate', { enumerable: true, get: () => { throw new Error('getter exploded'); } });
  expect(() => resolveConfig(input, {})).toThrow(ValidationError);
  expect(() => resolveConfig(input, {})).toThrow(/engine config: cannot be read \(getter exploded\)/);
});
