// A run whose cancel was delivered, and whose cleanup was still going when its execution ended
// (a crash, or a cleanup sleep that suspended it), can start its next execution after the
// cancel's grace has run out (the engine was down, or the run was woken at the grace's end).
// That session ends the run `cancelled` before the workflow code starts. It used to start the
// code and end the session a microtask later: the code replayed its recorded steps, then the
// ended session refused its calls (ctx.random threw, step calls never settled) while a
// concurrent branch went on calling steps past the journal. The simulation's mirror of call
// positions saw `mail` called where the journal holds `reply` (simulation seed 6030860).
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/domain/errors.ts';
import { RunSession } from '../../src/runtime/run-session.ts';
import type { WorkflowFn } from '../../sdk/types.ts';
import { after, memLog } from './fixtures/mem-step-log.ts';

describe('a session that starts after the cancel grace ran out', () => {
  const GRACE = 60_000;
  const make = () => {
    const calls: string[] = [];
    const fn: WorkflowFn = async ({ step, ctx }) => {
      calls.length = 0;
      const call = (name: string) => (calls.push(name), name);
      // The seed's shape: a Promise.any whose losing chain goes on after the main line moved.
      await Promise.any([
        step.sleep(call('doze'), 500),
        (async () => {
          await step.do(call('fetch'), () => 'fetched');
          // Still sleeping when the cancel comes: it gets the CancelledError too.
          await step.sleep(call('nap'), 1_000);
          return step.do(call('mail'), () => 'mailed');
        })(),
      ]);
      call('ctx.random');
      ctx.random();
      try {
        await step.waitForEvent(call('reply'));
      } catch (err) {
        if (!(err instanceof CancelledError)) throw err;
        // Cleanup that outlives the grace.
        await step.sleep(call('undo'), '1h');
      }
      return 'done';
    };
    return { fn, calls };
  };

  it('ends the run cancelled without starting the code; one moment earlier the cleanup goes on', async () => {
    const { fn, calls } = make();
    // Execution 1: `fetch` finishes; `doze` and `nap` sleep.
    const s1 = memLog([]);
    const o1 = await new RunSession(s1.log, fn, undefined, { cancelGraceMs: GRACE }).run();
    expect(o1).toMatchObject({ type: 'suspended' });
    // Execution 2 at 1,600 (`doze` due, `nap` not), cancel requested: it reaches `reply` and
    // `nap`, where the code waits; the cleanup sleep suspends the run until the grace ends.
    const s2 = memLog(after(s1, o1));
    s2.setNow(1_600);
    s2.cancel();
    const o2 = await new RunSession(s2.log, fn, undefined, { cancelGraceMs: GRACE }).run();
    expect(o2).toMatchObject({ type: 'suspended', wakeAt: 1_600 + GRACE });
    const journal = after(s2, o2);
    const reply = journal.find((e) => e.name === 'reply');
    expect(reply).toMatchObject({ status: 'failed', error: { name: 'CancelledError' }, endedAt: 1_600 });
    const positions = journal.map((e) => [e.seq, e.name]);

    expect(journal.map((e) => [e.name, e.status, e.error?.name])).toEqual([
      ['doze', 'succeeded', undefined],
      ['fetch', 'succeeded', undefined],
      ['nap', 'failed', 'CancelledError'],
      ['ctx.random', 'succeeded', undefined],
      ['reply', 'failed', 'CancelledError'],
      ['undo', 'sleeping', undefined],
    ]);

    // Before the grace ends, the code runs: it replays up to its cleanup sleep, which
    // suspends it again until the grace's end.
    const early = memLog(journal);
    early.setNow(1_600 + GRACE - 5_000);
    const oEarly = await new RunSession(early.log, fn, undefined, { cancelGraceMs: GRACE }).run();
    expect(oEarly).toMatchObject({ type: 'suspended', wakeAt: 1_600 + GRACE });
    expect(calls).toEqual(['doze', 'fetch', 'nap', 'ctx.random', 'reply', 'undo']);

    // At the grace's end: cancelled, no code ran, nothing new in the journal.
    calls.length = 0;
    const late = memLog(journal);
    late.setNow(1_600 + GRACE);
    const oLate = await new RunSession(late.log, fn, undefined, { cancelGraceMs: GRACE }).run();
    expect(oLate).toEqual({ type: 'cancelled' });
    expect(calls).toEqual([]);
    expect(late.journal.filter(Boolean).map((e) => [e.seq, e.name])).toEqual(positions);
  });
});
