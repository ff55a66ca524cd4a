// fromInput('path'): the key or priority read from the input, usable in code and, as data, in
// workflow files; it reads own properties only and refuses a path that is not one.
import { describe, expect, it } from 'vitest';
import { fromInput } from '../../sdk/from-input.ts';
import { runKeyOf, runPriorityOf } from '../../sdk/queue.ts';

describe('fromInput', () => {
  it('reads the value at a dot path, array indices included; missing is undefined', () => {
    expect(fromInput('user.id')({ user: { id: 'u7' } })).toBe('u7');
    expect(fromInput('items.1.sku')({ items: [{ sku: 'a' }, { sku: 'b' }] })).toBe('b');
    expect(fromInput('user.id')({ user: null })).toBeUndefined();
    expect(fromInput('user.id')('text')).toBeUndefined();
  });

  it('never reaches a prototype', () => {
    expect(fromInput('constructor')({})).toBeUndefined();
    expect(fromInput('__proto__')({})).toBeUndefined();
    expect(fromInput('a.toString')({ a: {} })).toBeUndefined();
  });

  it('its result is checked as a key or priority function\'s', () => {
    expect(runKeyOf('w', { key: fromInput('tenant') }, { tenant: 't1' })).toBe('t1');
    expect(() => runKeyOf('w', { key: fromInput('tenant') }, {})).toThrow("workflow 'w' runs.key: the key function returned undefined, not a string");
    expect(runPriorityOf('w', { priority: fromInput<number>('p') }, { p: 3 })).toBe(3);
    expect(() => runPriorityOf('w', { priority: fromInput<number>('p') }, { p: '3' })).toThrow(/returned string, not an integer/);
  });

  it('refuses a path that is not one, in one line', () => {
    for (const bad of ['', 'a..b', '.a', 'a.', 'a b', 'a.b.c.d.e.f.g.h.i', 'a[0]']) {
      expect(() => fromInput(bad), bad).toThrow(/^fromInput\(path\)/);
    }
  });
});
