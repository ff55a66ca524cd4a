// planSlots(): journal-style table tests of the pure slot decisions, on a fixed hourly
// calendar (no cron-parser here: the domain gets calendar arithmetic injected).
import { describe, expect, it } from 'vitest';
import { planSlots, type SlotCalendar } from '../../src/domain/schedule.ts';

const H = 3_600_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const hourly: SlotCalendar = {
  nextAfter: (t) => Math.floor((t - T0) / H) * H + T0 + H,
  latestAtOrBefore: (t) => Math.floor((t - T0) / H) * H + T0,
};
const at = (h: number, extraMs = 0) => T0 + h * H + extraMs;
const base = { cap: 3, graceMs: 60_000, calendar: hourly };
const fates = (p: ReturnType<typeof planSlots>) => p.decisions.map((d) => [(d.at - T0) / H, d.fate]);

describe('planSlots', () => {
  it('fires an on-time slot under every policy', () => {
    for (const policy of ['latest', 'all', 'none'] as const) {
      const p = planSlots({ ...base, policy, after: at(0), now: at(1, 500) });
      expect(fates(p)).toEqual([[1, 'fired']]);
      expect(p.handledUpTo).toBe(at(1));
      expect(p.next).toBe(at(2));
    }
  });

  it('nothing due: no decisions, position unchanged', () => {
    const p = planSlots({ ...base, policy: 'latest', after: at(1), now: at(1, 30 * 60_000) });
    expect(p.decisions).toEqual([]);
    expect(p.handledUpTo).toBe(at(1));
    expect(p.next).toBe(at(2));
  });

  it("'latest' after an outage: the newest missed slot is caught up, older ones missed", () => {
    const p = planSlots({ ...base, policy: 'latest', after: at(0), now: at(5, 30 * 60_000) });
    expect(fates(p)).toEqual([[1, 'missed'], [2, 'missed'], [3, 'missed'], [4, 'missed'], [5, 'caught-up']]);
    expect(p.next).toBe(at(6));
  });

  it("'latest' when the restart lands on a slot: that slot fires on time, all older are missed", () => {
    const p = planSlots({ ...base, policy: 'latest', after: at(0), now: at(5, 10_000) });
    expect(fates(p)).toEqual([[1, 'missed'], [2, 'missed'], [3, 'missed'], [4, 'missed'], [5, 'fired']]);
  });

  it("'none' drops every late slot", () => {
    const p = planSlots({ ...base, policy: 'none', after: at(0), now: at(3, 30 * 60_000) });
    expect(fates(p)).toEqual([[1, 'missed'], [2, 'missed'], [3, 'missed']]);
    expect(p.handledUpTo).toBe(at(3));
  });

  it("'all' catches up to the cap, newest first kept; older ones are skipped and reported", () => {
    const p = planSlots({ ...base, policy: 'all', after: at(0), now: at(5, 30 * 60_000) });
    expect(fates(p)).toEqual([[1, 'skipped'], [2, 'skipped'], [3, 'caught-up'], [4, 'caught-up'], [5, 'caught-up']]);
    expect(p.decisions[0]!.reason).toMatch(/cap of 3/);
  });

  it('a clock that went backward fires nothing already handled', () => {
    const p = planSlots({ ...base, policy: 'all', after: at(5), now: at(2) });
    expect(p.decisions).toEqual([]);
    expect(p.handledUpTo).toBe(at(5));
    expect(p.next).toBe(at(6));
  });

  it('lists at most listLimit dropped slots and summarises the rest as a range', () => {
    const p = planSlots({ ...base, policy: 'latest', after: at(0), now: at(100, 30 * 60_000), listLimit: 10 });
    expect(p.decisions.filter((d) => d.fate === 'missed')).toHaveLength(10);
    expect(p.range).toMatchObject({ from: at(11), to: at(99), count: 89, atLeast: false, fate: 'missed' });
    expect(p.decisions.at(-1)).toMatchObject({ at: at(100), fate: 'caught-up' });
  });

  it('a gap too long to walk is summarised as "at least" and still fires the newest slot', () => {
    const p = planSlots({ ...base, policy: 'latest', after: at(0), now: at(20_000, 30 * 60_000) });
    expect(p.decisions.at(-1)).toMatchObject({ at: at(20_000), fate: 'caught-up' });
    expect(p.range).toMatchObject({ atLeast: true, to: at(19_999), fate: 'missed' });
    expect(p.next).toBe(at(20_001));
  });
});
