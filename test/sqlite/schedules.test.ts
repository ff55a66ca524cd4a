// Schedules on the SQLite backend under the testing kit's manual clock: the right slots
// (DST in a named zone included), catch-up after a 3-day outage for each policy, a clock
// that goes backward, the slot ledger that answers "why didn't my 9am job run?", and a
// rescan when timers stalled (a sleeping laptop).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { schedule, workflow, type CatchUpPolicy } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { slotRunId } from '../../src/domain/ids.ts';
import { buildContainer, TOKENS } from '../../compose/container.ts';
import { resolveConfig } from '../../compose/config.ts';
import type { Engine } from '../../src/runtime/engine.ts';
import type { Clock } from '../../src/ports/clock.ts';

const open: TestEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-sched-'));
  dirs.push(d);
  return d;
}

function daily(cron: string, opts: { timezone?: string; catchUp?: CatchUpPolicy } = {}, name = 'job') {
  return workflow(name, (w) => {
    w.trigger(schedule(cron, opts));
    w.run(async ({ input, step }) => step.do('work', () => input.slot as string));
  });
}

async function boot(wf: ReturnType<typeof daily>, startAt: string, dataDir?: string): Promise<TestEngine> {
  const t = await createTestEngine({ workflows: [wf], startAt, dataDir });
  open.push(t);
  return t;
}

async function slotsOf(engine: Engine, workflow = 'job'): Promise<string[]> {
  const runs = await engine.runs.list({ workflow, limit: 1000 });
  return runs.map((r) => (r.input as { slot: string }).slot).sort();
}

describe('schedules (sqlite, manual clock)', () => {
  it('fires each 9am slot in America/New_York across the spring-forward change', async () => {
    const t = await boot(daily('0 9 * * *', { timezone: 'America/New_York' }), '2026-03-06T12:00:00Z');
    await t.advance('4d');
    // 9am EST is 14:00Z; from 2026-03-08 (EDT) 9am is 13:00Z.
    expect(await slotsOf(t.engine)).toEqual([
      '2026-03-06T14:00:00.000Z', '2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z', '2026-03-09T13:00:00.000Z',
    ]);
    const run = await t.engine.runs.get(slotRunId('job', '2026-03-08T13:00:00.000Z'));
    expect(run.status).toBe('succeeded');
    expect(run.input).toEqual({ slot: '2026-03-08T13:00:00.000Z', fate: 'fired' });
    const fates = (await t.engine.schedules.slots({ workflow: 'job' })).map((s) => s.fate);
    expect(fates).toEqual(['fired', 'fired', 'fired', 'fired']);
  });

  it('a 1:30am job runs once on the fall-back night; an hourly job runs 25 times that local day', async () => {
    const t = await boot(daily('30 1 * * *', { timezone: 'America/New_York' }), '2026-10-31T04:00:00Z');
    await t.advance('4d');
    // 1:30 EDT = 05:30Z; after the change 1:30 EST = 06:30Z. Nov 1 has two 1:30s; one run.
    expect(await slotsOf(t.engine)).toEqual([
      '2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z', '2026-11-03T06:30:00.000Z',
    ]);

    const h = await boot(daily('0 * * * *', { timezone: 'America/New_York' }, 'hourly'), '2026-11-01T03:30:00Z');
    await h.advance('25h'); // local midnight Nov 1 (04:00Z) .. midnight Nov 2 (05:00Z), exclusive
    const slots = await slotsOf(h.engine, 'hourly');
    expect(slots).toHaveLength(25);
    expect(slots[0]).toBe('2026-11-01T04:00:00.000Z');
    expect(slots.at(-1)).toBe('2026-11-02T04:00:00.000Z');
  });

  it('a nonexistent local time (2:30am on spring-forward night) still runs once that day', async () => {
    const t = await boot(daily('30 2 * * *', { timezone: 'America/New_York' }), '2026-03-07T12:00:00Z');
    await t.advance('2d');
    const slots = await slotsOf(t.engine);
    expect(slots).toHaveLength(2);
    expect(slots[0]).toBe('2026-03-08T07:30:00.000Z'); // cron-parser moves it to 3:30 EDT
  });

  describe('restart after a 3-day outage', () => {
    async function outage(catchUp: CatchUpPolicy) {
      const dataDir = tempDir();
      const wf = daily('0 9 * * *', { catchUp });
      const before = await boot(wf, '2026-01-05T08:00:00Z', dataDir);
      await before.advance('2h'); // Jan 5 09:00 fires on time
      await before.close();
      open.splice(open.indexOf(before), 1);
      // Down from Jan 5 10:00 to Jan 8 12:00: slots Jan 6, 7 and 8 at 09:00 passed unseen.
      const after = await boot(wf, '2026-01-08T12:00:00Z', dataDir);
      await after.idle();
      return after;
    }

    it("catchUp 'latest' runs only the most recent missed slot", async () => {
      const t = await outage('latest');
      expect(await slotsOf(t.engine)).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-08T09:00:00.000Z']);
      const ledger = (await t.engine.schedules.slots({ workflow: 'job' })).map((s) => [s.slot.slice(0, 10), s.fate]);
      expect(ledger).toEqual([['2026-01-08', 'caught-up'], ['2026-01-07', 'missed'], ['2026-01-06', 'missed'], ['2026-01-05', 'fired']]);
      expect((await t.engine.runs.get(slotRunId('job', '2026-01-08T09:00:00.000Z'))).input).toEqual({ slot: '2026-01-08T09:00:00.000Z', fate: 'caught-up' });
      await t.advance('1d'); // and on time again afterwards
      expect((await slotsOf(t.engine)).at(-1)).toBe('2026-01-09T09:00:00.000Z');
    });

    it("catchUp 'all' runs every missed slot, oldest first", async () => {
      const t = await outage('all');
      expect(await slotsOf(t.engine)).toEqual([
        '2026-01-05T09:00:00.000Z', '2026-01-06T09:00:00.000Z', '2026-01-07T09:00:00.000Z', '2026-01-08T09:00:00.000Z',
      ]);
      const fates = (await t.engine.schedules.slots({ workflow: 'job' })).map((s) => s.fate);
      expect(fates).toEqual(['caught-up', 'caught-up', 'caught-up', 'fired']);
      for (const r of await t.engine.runs.list({ workflow: 'job' })) expect(r.status).toBe('succeeded');
    });

    it("catchUp 'none' runs nothing for the outage and says why", async () => {
      const t = await outage('none');
      expect(await slotsOf(t.engine)).toEqual(['2026-01-05T09:00:00.000Z']);
      const missed = await t.engine.schedules.slots({ workflow: 'job', fate: 'missed' });
      expect(missed.map((s) => s.slot.slice(0, 10))).toEqual(['2026-01-08', '2026-01-07', '2026-01-06']);
      const why = await t.engine.schedules.explain('job');
      expect(why.summary).toMatch(/2026-01-08T09:00:00.000Z was missed.*catchUp 'none'/);
      expect(why.details.join('\n')).toMatch(/next slot 2026-01-09T09:00:00.000Z/);
    });

    it("catchUp 'all' is capped: a long outage of an every-minute job runs the newest 100 and reports the rest", async () => {
      const dataDir = tempDir();
      const wf = daily('* * * * *', { catchUp: 'all' });
      const before = await boot(wf, '2026-01-05T08:00:30Z', dataDir);
      await before.close();
      open.splice(open.indexOf(before), 1);
      const after = await boot(wf, '2026-01-08T08:00:30Z', dataDir);
      expect(await after.engine.runs.list({ workflow: 'job', limit: 1000 })).toHaveLength(100);
      const skipped = await after.engine.schedules.slots({ workflow: 'job', fate: 'skipped', limit: 1000 });
      const total = skipped.reduce((n, s) => n + s.count, 0);
      expect(total).toBe(3 * 24 * 60 - 100);
      expect(skipped.some((s) => s.count > 1 && /more slots/.test(s.reason))).toBe(true);
    });
  });

  it('a clock that moved backward across a restart does not fire a slot twice', async () => {
    const dataDir = tempDir();
    const wf = daily('0 9 * * *');
    const first = await boot(wf, '2026-01-05T08:00:00Z', dataDir);
    await first.advance('2h');
    await first.close();
    open.splice(open.indexOf(first), 1);
    const again = await boot(wf, '2026-01-05T08:30:00Z', dataDir); // wall clock went back 1.5h
    await again.advance('2h');
    expect(await slotsOf(again.engine)).toEqual(['2026-01-05T09:00:00.000Z']);
    await again.advance('1d');
    expect(await slotsOf(again.engine)).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-06T09:00:00.000Z']);
  });

  it('a slot run is created once even if its id already exists (crash between fire and record)', async () => {
    const wf = daily('0 9 * * *');
    const t = await boot(wf, '2026-01-05T08:00:00Z');
    // A "previous life" already started the 09:00 run but never advanced the schedule.
    await t.engine.trigger('job', { slot: 'pre-existing' }, { runId: slotRunId('job', '2026-01-05T09:00:00.000Z') });
    await t.advance('2h');
    const runs = await t.engine.runs.list({ workflow: 'job' });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.input).toEqual({ slot: 'pre-existing' });
    expect((await t.engine.schedules.slots({ workflow: 'job' }))[0]).toMatchObject({ fate: 'fired', runId: runs[0]!.runId });
  });

  it('stalled timers (machine asleep): a wall-clock jump or engine.rescan() fires what came due', async () => {
    // A real Clock whose timers never fire, like setTimeout during a suspend.
    class SleepingClock implements Clock {
      private listeners = new Set<(gap: number) => void>();
      constructor(public t: number) {}
      now() { return this.t; }
      setTimer() { return () => {}; }
      onJump(fn: (gap: number) => void) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
      wake(ms: number) { this.t += ms; for (const l of this.listeners) l(ms); }
    }
    const clock = new SleepingClock(Date.parse('2026-01-05T08:00:00Z'));
    const engine = buildContainer(resolveConfig({ backend: 'sqlite', dataDir: tempDir(), workflows: [daily('0 9 * * *')] }), { clock }).get<Engine>(TOKENS.engine);
    await engine.start();
    try {
      clock.wake(2 * 3_600_000); // 10:00, reported as a jump
      await engine.executor.idle();
      expect(await slotsOf(engine)).toEqual(['2026-01-05T09:00:00.000Z']);
      clock.t += 24 * 3_600_000; // Jan 6 10:00, silently: only rescan can notice
      await engine.rescan();
      await engine.executor.idle();
      expect(await slotsOf(engine)).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-06T09:00:00.000Z']);
    } finally {
      await engine.stop();
    }
  });
});
