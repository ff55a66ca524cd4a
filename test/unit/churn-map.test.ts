// ChurnMap (src/runtime/churn-map.ts) stands in for Map<string, V> in the executor's per-run
// registries: it must behave like one for any run id, including ones that name
// Object.prototype members or look like array indexes.
import { describe, expect, it } from 'vitest';
import { ChurnMap } from '../../src/runtime/churn-map.ts';

describe('ChurnMap', () => {
  it('gets, sets, deletes and counts like a Map', () => {
    const m = new ChurnMap<number>();
    expect(m.get('a')).toBeUndefined();
    expect(m.has('a')).toBe(false);
    m.set('a', 1).set('b', 2).set('a', 3);
    expect(m.size).toBe(2);
    expect(m.get('a')).toBe(3);
    expect(m.delete('a')).toBe(true);
    expect(m.delete('a')).toBe(false);
    expect(m.has('a')).toBe(false);
    expect(m.size).toBe(1);
    expect(m.values()).toEqual([2]);
    m.clear();
    expect(m.size).toBe(0);
    expect(m.values()).toEqual([]);
  });

  it('treats keys named like prototype members or indexes as plain keys', () => {
    const m = new ChurnMap<string>();
    for (const k of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '0', '42', '']) {
      expect(m.has(k)).toBe(false);
      expect(m.get(k)).toBeUndefined();
      m.set(k, `v${k}`);
      expect(m.get(k)).toBe(`v${k}`);
    }
    expect(m.size).toBe(7);
    expect(m.values().sort()).toEqual(['v', 'v0', 'v42', 'v__proto__', 'vconstructor', 'vhasOwnProperty', 'vtoString']);
    expect(m.delete('__proto__')).toBe(true);
    expect(m.has('__proto__')).toBe(false);
    expect(m.size).toBe(6);
  });

  it('keeps a value of undefined as present', () => {
    const m = new ChurnMap<undefined>();
    m.set('x', undefined);
    expect(m.has('x')).toBe(true);
    expect(m.size).toBe(1);
  });

  it('values() is a snapshot: deleting while iterating visits every value once', () => {
    const m = new ChurnMap<number>();
    for (let i = 0; i < 100; i++) m.set(`r${i}`, i);
    const seen: number[] = [];
    for (const v of m.values()) {
      seen.push(v);
      m.delete(`r${v}`);
    }
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(m.size).toBe(0);
  });
});
