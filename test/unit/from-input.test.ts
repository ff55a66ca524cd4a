// fromInput('path'): the key or priority read from the input, usable in code and, as data, in
// workflow files; it reads own properties only and refuses a path that is not one.
import { describe, expect, it } from 'vitest';
import { fromInput } from '../../sdk/from-input.ts';
import { runKeyOf, runPriorityOf } from '../../sdk/queue.ts';
import { runFlowKeysOf } from '../../sdk/run-flow.ts';
import { declaredRuns, descriptionSchema } from '../../src/adapters/deno/description.ts';
import { parseOrThrow } from '../../src/domain/validate.ts';

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

describe('a file description\'s runs, made again in the engine', () => {
  const base = { name: 'w', triggers: [], stepDefaults: {}, permissions: {} };
  it('rebuilds fromInput keys and priority from their paths', () => {
    const d = parseOrThrow(descriptionSchema, { ...base, runs: { queue: { name: 'q', options: { concurrency: 1 } }, key: { fromInput: 'tenant' }, priority: { fromInput: 'p' }, singleton: { mode: 'skip', key: { fromInput: 'user.id' } } } }, 'd');
    const runs = declaredRuns(d, 'f.ts')!;
    expect(runKeyOf('w', runs, { tenant: 't9' })).toBe('t9');
    expect(runPriorityOf('w', runs, { p: 4 })).toBe(4);
    expect(runs.singleton!.key!({ user: { id: 'u1' } })).toBe('u1');
  });

  it('refuses a description whose path is not one, or that carries anything else, naming the field', () => {
    const bad = (runs: unknown) => () => parseOrThrow(descriptionSchema, { ...base, runs }, 'workflow file f.ts');
    expect(bad({ singleton: { mode: 'skip', key: { fromInput: 'a..b' } } })).toThrow(/runs\.singleton\.key\.fromInput: expected a dot path/);
    expect(bad({ singleton: { mode: 'skip', key: { fromInput: '__proto__.x', code: 'x' } } })).toThrow(/runs\.singleton\.key/);
    expect(bad({ key: 'tenant' })).toThrow(/runs\.key/);
    // A path that parses still reads own properties only.
    const d = parseOrThrow(descriptionSchema, { ...base, runs: { singleton: { mode: 'skip', key: { fromInput: '__proto__' } } } }, 'd');
    expect(() => runFlowKeysOf('w', declaredRuns(d, 'f.ts'), {})).toThrow(/returned undefined, not a string/);
  });
});
