// Links (src/runtime/links.ts) hold a session's step calls and attempts in flight: insertion
// order, removal from anywhere, a snapshot to iterate while the set changes, and a removed
// link that no longer reaches its value.
import { describe, expect, it } from 'vitest';
import { Links } from '../../src/runtime/links.ts';

describe('Links', () => {
  it('keeps insertion order through removals from the head, middle and tail', () => {
    const l = new Links<string>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((v) => l.add(v));
    expect(l.values()).toEqual(['a', 'b', 'c', 'd']);
    l.remove(b!);
    expect(l.values()).toEqual(['a', 'c', 'd']);
    l.remove(a!);
    l.remove(d!);
    expect(l.values()).toEqual(['c']);
    expect(l.size).toBe(1);
    l.add('e');
    expect(l.values()).toEqual(['c', 'e']);
    l.remove(c!);
    expect(l.values()).toEqual(['e']);
  });

  it('removes a link once: a second removal changes nothing', () => {
    const l = new Links<number>();
    const one = l.add(1);
    l.add(2);
    l.remove(one);
    l.remove(one);
    expect(l.size).toBe(1);
    expect(l.values()).toEqual([2]);
  });

  it('empties a removed link, so a stale pointer to it reaches nothing', () => {
    const l = new Links<{ big: string }>();
    const first = l.add({ big: 'x' });
    const mid = l.add({ big: 'y' });
    l.add({ big: 'z' });
    l.remove(mid);
    expect(mid).toEqual({ value: undefined, prev: undefined, next: undefined });
    expect(first.next?.value).toEqual({ big: 'z' });
  });

  it('hands out a snapshot: changes while iterating it do not affect it', () => {
    const l = new Links<number>();
    const links = [1, 2, 3].map((v) => l.add(v));
    const seen: number[] = [];
    for (const v of l.values()) {
      seen.push(v);
      if (v === 1) {
        l.remove(links[1]!);
        l.add(4);
      }
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(l.values()).toEqual([1, 3, 4]);
  });
});
