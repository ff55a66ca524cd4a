// A step's value comes from its own body: the k-th call of a repeated name (`charge#2`) is
// matched with the k-th recorded result of that name, so an execution that calls steps of
// one name in another order than the execution that recorded them hands a call another
// call's value (issue 47, seeds 943373 and 946221; issue 46, seed 922488). These cases drive
// the one RunSession over an in-memory step log whose writes commit in batches, as SQLite's
// commit queue does (everything issued in one turn resolves together in the next), so the
// interleavings the simulation found happen on every run; each fails on the engine before
// the fix. The same invariant on real backends: test/conformance/own-results.ts.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/domain/json.ts';
import { RunSession } from '../../src/runtime/run-session.ts';
import type { StepApi, WorkflowFn } from '../../sdk/types.ts';
import { after, memLog } from './fixtures/mem-step-log.ts';

/** step.do(name) whose body returns `site`; a value from another body is noted. */
const owned = (mismatches: string[]) => async (step: StepApi, name: string, site: string): Promise<Json> => {
  const v = await step.do(name, () => site);
  if (v !== site) mismatches.push(`the call at ${site} got ${JSON.stringify(v)}`);
  return v;
};

describe('repeated step names keep their own results across executions', () => {
  it("ctx.emit's result does not overtake a sibling branch's result released in the same turn (seed 946221)", async () => {
    const mismatches: string[] = [];
    const own = owned(mismatches);
    const fn: WorkflowFn = async ({ step, ctx }) => {
      const first = step.waitForEvent('approve');
      const branch = (async () => {
        await step.waitForEvent('approve');
        return own(step, 'charge', 'branch');
      })();
      await step.waitForEvent('reply');
      await ctx.emit('e', {});
      const main = await own(step, 'charge', 'main');
      return [await first, await branch, main];
    };
    const s1 = memLog([]);
    const o1 = await new RunSession(s1.log, fn).run();
    expect(o1.type).toBe('suspended');
    // The signals arrive; this execution records who called charge and charge#2.
    const s2 = memLog(after(s1, o1), { approve: [1, 2], reply: [3] });
    const o2 = await new RunSession(s2.log, fn).run();
    expect(o2).toEqual({ type: 'succeeded', output: [1, 'branch', 'main'] });
    // Replayed: each call of 'charge' gets its own body's value, as recorded.
    const s3 = memLog(after(s2, o2));
    const o3 = await new RunSession(s3.log, fn).run();
    expect(o3).toEqual(o2);
    expect(mismatches).toEqual([]);
  });

  it('a cancel that arrives while an execution replays reaches the code after the results recorded before it (seeds 943373, 922488)', async () => {
    const mismatches: string[] = [];
    const own = owned(mismatches);
    let cancelNow: (() => void) | undefined;
    const fn: WorkflowFn = async ({ step }) => {
      const chain = (async () => {
        const got: Json[] = [];
        for (let i = 0; i < 6; i++) got.push(await own(step, 'fetch', `chain-${i}`));
        return got;
      })();
      const slow = step
        .do('slow', { retries: { limit: 2, delay: 1_000, backoff: 'constant', jitter: false } }, ({ attempt, signal }) => {
          if (attempt === 1) throw new Error('first attempt fails');
          const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
          cancelNow?.(); // the run is cancelled while this execution replays the chain
          return aborted;
        })
        .catch(async (err: unknown) => {
          await own(step, 'fetch', 'cleanup');
          throw err;
        });
      return Promise.all([chain, slow]);
    };
    const s1 = memLog([]);
    const o1 = await new RunSession(s1.log, fn).run();
    expect(o1).toMatchObject({ type: 'suspended', status: 'retrying', wakeAt: 2_000 });
    const s2 = memLog(after(s1, o1));
    s2.setNow(3_000);
    cancelNow = s2.cancel;
    const o2 = await new RunSession(s2.log, fn).run();
    cancelNow = undefined;
    expect(o2.type).toBe('cancelled');
    expect(mismatches).toEqual([]);
    expect(s2.journal.filter((e) => e.name.startsWith('fetch')).map((e) => [e.name, e.result])).toEqual([
      ...Array.from({ length: 6 }, (_, i) => [i === 0 ? 'fetch' : `fetch#${i + 1}`, `chain-${i}`]),
      ['fetch#7', 'cleanup'],
    ]);
  });

  it('a cleanup wait called after the cancel keeps waiting in a later execution (seeds 922488, 943373)', async () => {
    const fn: WorkflowFn = async ({ step }) => {
      try {
        await step.sleep('long', '1d');
      } catch (err) {
        const [ack] = await Promise.all([step.waitForEvent('ack'), step.sleep('settle', 500)]);
        await step.do('undo', () => `undone after ${String(ack)}`);
        throw err;
      }
    };
    const s1 = memLog([]);
    const o1 = await new RunSession(s1.log, fn).run();
    expect(o1).toMatchObject({ type: 'suspended', status: 'sleeping' });
    // Cancelled while sleeping: delivered, then the cleanup suspends on its wait and sleep.
    const s2 = memLog(after(s1, o1));
    s2.cancel();
    const o2 = await new RunSession(s2.log, fn).run();
    expect(o2).toMatchObject({ type: 'suspended', status: 'waiting', signals: ['ack'] });
    // The next execution (the settle sleep due, no signal yet): the wait keeps waiting.
    const s3 = memLog(after(s2, o2));
    s3.setNow(2_000);
    const o3 = await new RunSession(s3.log, fn).run();
    expect(o3).toMatchObject({ type: 'suspended', status: 'waiting', signals: ['ack'] });
    expect(after(s3, o3).find((e) => e.name === 'ack')?.status).toBe('waiting');
  });
});
