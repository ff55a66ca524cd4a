// The pure rules of child runs (src/domain/child-runs.ts): the child's run id derived from
// the parent's run and the step (stable, unique per step, always a valid run id), and the
// internal end signal's name.
import { describe, expect, it } from 'vitest';
import { childEnd, childOfSignal, childSignal, isChildEnd } from '../../src/domain/child-runs.ts';
import { childRunId } from '../../src/domain/child-id.ts';

const RUN_ID = /^[A-Za-z0-9_.:\-]{1,200}$/;

describe('childRunId', () => {
  it('is readable for plain step names, with a repeated name as .k', () => {
    expect(childRunId('order-1', 'pay')).toBe('order-1:pay');
    expect(childRunId('order-1', 'pay#2')).toBe('order-1:pay.2');
    expect(childRunId('a:b', 'c')).toBe('a:b:c');
  });

  it('digests names a run id cannot hold, and ids past 200 characters', () => {
    const odd = childRunId('r', 'charge card?');
    expect(odd).toMatch(/^r:\.[0-9a-f]{16}$/);
    expect(childRunId('r', 'charge card?')).toBe(odd);
    expect(childRunId('r', 'charge card?#2')).not.toBe(odd);
    const long = childRunId('p'.repeat(190), 'step-name-long');
    expect(long).toMatch(/^c\.[0-9a-f]{40}$/);
  });

  it('gives distinct valid run ids to distinct steps', () => {
    const names = ['a', 'a#2', 'a#3', 'a.2', 'a 2', 'b', 'a-2', 'a_2', 'ä', 'a:2', ...Array.from({ length: 200 }, (_, i) => `t${i}`)];
    const ids = names.map((n) => childRunId('parent.run:1', n));
    expect(new Set(ids).size).toBe(names.length);
    for (const id of ids) expect(id).toMatch(RUN_ID);
  });
});

describe('the end signal', () => {
  it('names the child, and a wait step of that name gives it back', () => {
    expect(childSignal('o:pay')).toBe('child:o:pay');
    expect(childOfSignal('child:o:pay')).toBe('o:pay');
    expect(childOfSignal('child:o:pay#2')).toBe('o:pay');
    expect(childOfSignal('approval')).toBeUndefined();
  });

  it('carries the outcome', () => {
    expect(childEnd('k', 'succeeded', { workflow: 'w', output: 1 })).toEqual({ '~child': 'k', workflow: 'w', status: 'succeeded', output: 1 });
    expect(childEnd('k', 'failed', { error: { name: 'E', message: 'm' } })).toEqual({ '~child': 'k', status: 'failed', error: { name: 'E', message: 'm' } });
    expect(isChildEnd(childEnd('k', 'cancelled'))).toBe(true);
    expect(isChildEnd({ status: 'succeeded' })).toBe(false);
  });
});
