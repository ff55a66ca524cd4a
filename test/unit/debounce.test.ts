// The workflow option `debounce` (docs/flow-control.md, Debounce): bad configuration is
// refused when the workflow is defined, in one line naming the field; the due time of a
// burst is `period` after its last trigger, at most `maxWait` after its first.
import { describe, expect, it } from 'vitest';
import { event, manual, schedule, workflow } from '@tranquil/sdk';
import { debounceDueAt, debounceKeyOf } from '../../sdk/debounce.ts';

const define = (debounce: unknown) =>
  workflow('d', { debounce } as never, (w) => {
    w.trigger(manual());
    w.run(async () => null);
  });

describe('debounce option', () => {
  it('refuses a period of 0 or less, a maxWait shorter than the period, a key that is not a function, an unknown field', () => {
    expect(() => define({ period: 0 })).toThrow("workflow 'd' options.debounce.period: must be longer than 0");
    expect(() => define({ period: '-5s' })).toThrow(/workflow 'd' options\.debounce\.period/);
    expect(() => define({ period: '5s', maxWait: '1s' })).toThrow("workflow 'd' options.debounce.maxWait: must be at least the period (5000ms), got 1000ms");
    expect(() => define({ period: '5s', key: 'user' })).toThrow(/workflow 'd' options\.debounce\.key: expected a function/);
    expect(() => define({ period: '5s', timeout: '1m' })).toThrow(/workflow 'd' options\.debounce/);
    expect(() => define({})).toThrow(/options\.debounce\.period/);
  });

  it('accepts event, schedule and webhook triggers on a debounced workflow (they join its bursts)', () => {
    const withTrigger = (t: ReturnType<typeof event>) => () =>
      workflow('d', { debounce: { period: '1s' } }, (w) => {
        w.trigger(manual());
        w.trigger(t);
        w.run(async () => null);
      });
    expect(withTrigger(event('user.updated'))().triggers.map((t) => t.type)).toEqual(['manual', 'event']);
    expect(withTrigger(schedule('0 * * * *'))().debounce).toMatchObject({ periodMs: 1000 });
  });

  it('keeps the durations in ms and accepts maxWait equal to the period', () => {
    expect(define({ period: '5s', maxWait: '1m' }).debounce).toMatchObject({ periodMs: 5000, maxWaitMs: 60_000 });
    expect(define({ period: 250, maxWait: 250 }).debounce).toMatchObject({ periodMs: 250, maxWaitMs: 250 });
    expect(define({ period: '5s' }).debounce!.maxWaitMs).toBeUndefined();
  });

  it('is due a period after the last trigger, at most maxWait after the first', () => {
    expect(debounceDueAt({ periodMs: 100 }, 0, 1000)).toBe(1100);
    expect(debounceDueAt({ periodMs: 100, maxWaitMs: 500 }, 0, 300)).toBe(400);
    expect(debounceDueAt({ periodMs: 100, maxWaitMs: 500 }, 0, 450)).toBe(500);
  });

  it('refuses a key function that throws or returns no string, naming it', () => {
    const spec = define({ period: '1s', key: (i: { u: unknown }) => i.u }).debounce!;
    expect(debounceKeyOf('d', spec, { u: 'a' })).toBe('a');
    expect(() => debounceKeyOf('d', spec, { u: null })).toThrow("workflow 'd' debounce.key: the key function returned null, not a string");
    expect(() => debounceKeyOf('d', spec, null)).toThrow(/workflow 'd' debounce.key: the key function threw: /);
    expect(() => debounceKeyOf('d', spec, { u: '' })).toThrow(/a string of 0 characters/);
  });
});

describe('debounce on the test engine (manual clock)', () => {
  it('starts the burst\'s run only when the clock passes a period after the last trigger, with the last input', async () => {
    const { createTestEngine } = await import('@tranquil/engine/testing');
    const ran: number[] = [];
    const wf = workflow('digest', { debounce: { period: '10m', maxWait: '1h' } }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('send', () => (ran.push(input.n), input.n)));
    });
    const t = await createTestEngine({ workflows: [wf] });
    try {
      const first = await t.engine.trigger('digest', { n: 1 });
      expect(first).toMatchObject({ created: true, debouncedUntil: new Date(t.now() + 600_000).toISOString() });
      await t.advance('9m');
      const second = await t.engine.trigger('digest', { n: 2 });
      expect(second).toMatchObject({ runId: first.runId, created: false });
      await t.advance('9m'); // 18 min after the first, 9 after the last: not due yet
      expect(ran).toEqual([]);
      await t.advance('1m');
      expect(ran).toEqual([2]);
      expect((await t.engine.result(first.runId)).output).toBe(2);
      // A trigger now opens a new burst.
      expect((await t.engine.trigger('digest', { n: 3 })).runId).not.toBe(first.runId);
    } finally {
      await t.close();
    }
  });

  it('debounces a schedule: slots within the period join one burst; the ledger says so; the run gets the last slot', async () => {
    const { createTestEngine } = await import('@tranquil/engine/testing');
    const ran: string[] = [];
    // A slot every minute, quiet for 90 s after each: the run comes only at maxWait.
    const wf = workflow('every-minute', { debounce: { period: '90s', maxWait: '5m' } }, (w) => {
      w.trigger(schedule('* * * * *'));
      w.run(async ({ input, step }) => step.do('tick', () => (ran.push(input.slot), input.slot)));
    });
    const t = await createTestEngine({ workflows: [wf] });
    try {
      await t.advance('4m');
      expect(ran).toEqual([]);
      const slots = await t.engine.schedules.slots({ workflow: 'every-minute' });
      expect(slots.length).toBeGreaterThanOrEqual(3);
      expect(slots.every((s) => s.fate === 'fired' && s.reason.endsWith('joined a debounce burst (its run starts when the burst is due)'))).toBe(true);
      // The first slot came within a minute of the start: maxWait ran it by 6 min; the next
      // burst (slots keep coming, each within the period) runs 5 min after its first, later.
      await t.advance('3m');
      // One run, by maxWait (5 min after the first slot), with the newest slot before it.
      expect(ran).toHaveLength(1);
      // Its input is a late slot of the burst (4 or 5 min after its first), not the first.
      const first = slots.map((s) => s.slot).sort()[0]!;
      expect(Date.parse(ran[0]!) - Date.parse(first)).toBeGreaterThanOrEqual(4 * 60_000);
      const runs = await t.engine.runs.list({ workflow: 'every-minute' });
      expect(runs).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});
