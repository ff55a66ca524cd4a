// A cancel requested while a run slept is pending in its next execution: it is thrown into the
// code at the next step that would wait or run, and holds new steps from running until then.
// When the workflow function returns before that (its main line went on through recorded
// steps), the run keeps its own outcome, and the steps the pending cancel held (a race's
// losing chain that called step.do) are recorded failed with CancelledError rather than left
// with nothing recorded (simulation seed 3101857). A replay of that journal ends the same.
// docs/semantics.md, "Cancel".
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/domain/errors.ts';
import { RunSession } from '../../src/runtime/run-session.ts';
import type { WorkflowFn } from '../../sdk/types.ts';
import { after, memLog } from './fixtures/mem-step-log.ts';

describe('a pending cancel when the workflow function returns first', () => {
  it("records the losing chain's held step cancelled, runs its cleanup, and keeps the run's outcome, on replay too", async () => {
    const bodies: string[] = [];
    const fn: WorkflowFn = async ({ step }) => {
      // The losing chain: not awaited by the main line.
      void (async () => {
        await step.do('charge', () => (bodies.push('charge'), 'charged'));
        await step.sleep('doze', 500);
        try {
          await step.do('fetch', () => (bodies.push('fetch'), 'fetched'));
        } catch (err) {
          await step.do('undo', () => (bodies.push(`undo:${err instanceof CancelledError}`), 'undone'));
        }
      })();
      try {
        await step.waitForEvent('approve', { timeout: '1s' });
        return 'approved';
      } catch {
        return 'timed out';
      }
    };
    const s1 = memLog([]);
    const o1 = await new RunSession(s1.log, fn).run();
    expect(o1).toMatchObject({ type: 'suspended', status: 'waiting', wakeAt: 1_500 });
    // Cancelled while it sleeps; the next execution starts when both deadlines have passed:
    // `doze` wakes, then `fetch` is held by the pending cancel; `approve` times out and the
    // main line returns before the run ever waits on a step.
    const s2 = memLog(after(s1, o1));
    s2.cancel();
    s2.setNow(2_500);
    const o2 = await new RunSession(s2.log, fn).run();
    expect(o2).toEqual({ type: 'succeeded', output: 'timed out' });
    const journal = after(s2, o2);
    expect(journal.map((e) => [e.name, e.status, e.error?.name])).toEqual([
      ['charge', 'succeeded', undefined],
      ['approve', 'timedout', 'TimeoutError'],
      ['doze', 'succeeded', undefined],
      ['fetch', 'failed', 'CancelledError'],
      ['undo', 'succeeded', undefined],
    ]);
    // The held body never ran; the chain's cleanup ran once, with the CancelledError.
    expect(bodies).toEqual(['charge', 'undo:true']);
    // A replay of the finished journal (no cancel to hear) ends as stored, running nothing.
    const s3 = memLog(journal);
    const o3 = await new RunSession(s3.log, fn).run();
    expect(o3).toEqual(o2);
    expect(bodies).toEqual(['charge', 'undo:true']);
  });

  it('a run whose code was handed the cancel before it returned still ends cancelled, on replay too', async () => {
    const fn: WorkflowFn = async ({ step }) => {
      try {
        await step.sleep('long', '1d');
      } catch {
        await step.do('undo', () => 'undone');
      }
      return 'returned normally';
    };
    const s1 = memLog([]);
    const o1 = await new RunSession(s1.log, fn).run();
    const s2 = memLog(after(s1, o1));
    s2.cancel();
    const o2 = await new RunSession(s2.log, fn).run();
    expect(o2).toEqual({ type: 'cancelled' });
    const o3 = await new RunSession(memLog(after(s2, o2)).log, fn).run();
    expect(o3).toEqual({ type: 'cancelled' });
  });
});
