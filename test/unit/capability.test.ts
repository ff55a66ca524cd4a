// The pure capability rules (src/domain/capability.ts): containment is the only routing
// rule, and a parked step's error carries what it waits for.
import { describe, expect, it } from 'vitest';
import { CapabilityUnavailableError, contains, describeAffinity, parkOf } from '../../src/domain/capability.ts';
import { toErrorInfo } from '../../src/domain/errors.ts';

describe('capability rules', () => {
  it('a provider serves a request only if its attributes contain the affinity, values compared with ===', () => {
    expect(contains({ partition: 'work', window: 'w1' }, { partition: 'work' })).toBe(true);
    expect(contains({ partition: 'work' }, {})).toBe(true);
    expect(contains({ partition: 'home' }, { partition: 'work' })).toBe(false);
    expect(contains({}, { partition: 'work' })).toBe(false);
    expect(contains({ port: 1 }, { port: '1' })).toBe(false);
    expect(contains({ ok: true }, { ok: true })).toBe(true);
    // An inherited key is not an attribute.
    expect(contains({}, { toString: 'x' } as never)).toBe(false);
  });

  it("a park's error round-trips its capability and affinity; anything else is not a park", () => {
    const info = toErrorInfo(new CapabilityUnavailableError('browser.scrape', { partition: 'work', n: 2 }));
    expect(info).toEqual({
      name: 'CapabilityUnavailableError',
      message: "no provider of capability 'browser.scrape' matching n=2, partition=work is registered",
      fields: { capability: 'browser.scrape', affinity: { partition: 'work', n: 2 } },
    });
    expect(parkOf(JSON.parse(JSON.stringify(info)))).toEqual({ capability: 'browser.scrape', affinity: { partition: 'work', n: 2 } });
    expect(parkOf({ name: 'Error' })).toBeUndefined();
    expect(parkOf(undefined)).toBeUndefined();
    expect(describeAffinity({})).toBe('any provider');
  });
});
