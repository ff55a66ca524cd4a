// "A step's value comes from its own body", the invariant the simulation checks as
// `one-result` (test/reliability/sim/harness.ts), as a helper conformance cases use on every
// backend, and the cases for the mechanisms that broke it (issues 46 and 47): repeated step
// names (`fetch`, `fetch#2`, ...) called from concurrent branches, across a restart and
// across a cancel's cleanup. The k-th call of a name is matched with the k-th recorded
// result of that name, so any execution that calls them in another order than the one that
// recorded them hands one call another call's value.
//
// How the helper checks: every body is told its call site (a label the code gives at the
// call) and returns a value carrying it, and keeps, per idempotency key (the step's unique
// name), the sites whose bodies ran under it. Then (1) the code checks that each value it
// gets back carries the site of the call that asked for it, and (2) `journalProblems` checks
// that each recorded result came from a body that ran under that very step.
import { expect } from 'vitest';
import { CancelledError, manual, workflow } from '@tranquil/sdk';
import type { RunView } from '@tranquil/engine';
import type { StepApi, StepBody } from '../../sdk/types.ts';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface OwnResults {
  /** step.do(name, body) whose value must come back to this call (`site`). */
  do(step: StepApi, name: string, site: string, body?: StepBody<unknown>): Promise<string>;
  /** Values the code got that another call's body returned. */
  readonly mismatches: string[];
  /** Recorded results of `view` that no body of that step returned (plus `mismatches`). */
  problems(view: RunView): string[];
}

export function ownResults(): OwnResults {
  const mismatches: string[] = [];
  /** idempotency key -> sites whose body ran under it. */
  const ranUnder = new Map<string, Set<string>>();
  return {
    mismatches,
    async do(step, name, site, body) {
      const v = await step.do(name, { retries: { limit: 1 } }, async (info) => {
        const sites = ranUnder.get(info.idempotencyKey) ?? new Set<string>();
        sites.add(site);
        ranUnder.set(info.idempotencyKey, sites);
        const extra = body ? await body(info) : '';
        return `${site}|${String(extra)}`;
      });
      if (typeof v !== 'string' || !v.startsWith(`${site}|`)) mismatches.push(`the call at ${site} got ${JSON.stringify(v)}, which its own body never returned`);
      return v as string;
    },
    problems(view) {
      const out = [...mismatches];
      for (const s of view.steps) {
        if (s.kind !== 'do' || s.status !== 'succeeded' || typeof s.result !== 'string') continue;
        const site = s.result.split('|')[0]!;
        if (!ranUnder.get(`${view.runId}/${s.name}`)?.has(site)) out.push(`${s.name} recorded ${JSON.stringify(s.result)}, which no body of ${s.name} returned`);
      }
      return out;
    },
  };
}

export function ownResultScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('repeated step names in concurrent branches keep their own results across a restart', async () => {
    const own = ownResults();
    let firstEngine = true;
    const wf = workflow('own-fan-out', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const chain = async (b: string, n: number) => {
          const got: string[] = [];
          for (let i = 0; i < n; i++) got.push(await own.do(step, 'fetch', `${b}${i}`));
          return got;
        };
        // Cut off by the restart the first time: replay then meets the branches' recorded
        // results and this new attempt together.
        // (It ignores the stop's abort, so nothing is recorded for it.)
        const held = own.do(step, 'fetch', 'held', () => (firstEngine ? new Promise(() => {}) : 'ok'));
        const first = await Promise.all([chain('a', 3), chain('b', 2), held]);
        const second = await Promise.all([chain('c', 2), own.do(step, 'fetch', 'd0'), chain('e', 2)]);
        return { first, second };
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('own-fan-out', null);
    await until('the chains to be recorded', async () => (await engine.runs.get(runId)).steps.filter((s) => s.status === 'succeeded').length === 5);
    firstEngine = false; // the held body of the first engine hangs on; the next one returns
    const again = await restart(engine, [wf], dir);
    const view = await again.result(runId, { timeout: '20s' });
    expect(view.error).toBeUndefined();
    expect(view.status).toBe('succeeded');
    expect(own.problems(view)).toEqual([]);
    expect(view.output).toEqual({ first: [['a0|', 'a1|', 'a2|'], ['b0|', 'b1|'], 'held|ok'], second: [['c0|', 'c1|'], 'd0|', ['e0|', 'e1|']] });
  });

  test('a cleanup waitForEvent after a cancel keeps waiting in a later execution, and repeated cleanup names keep their own results', async () => {
    const own = ownResults();
    const wf = workflow('own-cleanup', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.sleep('long', '1d');
        } catch (err) {
          // The cleanup waits for an acknowledgement while a branch settles: the run
          // suspends, and the next execution replays the cancel and meets the wait again.
          const [ack] = await Promise.all([
            step.waitForEvent<string>('ack'),
            (async () => {
              await step.sleep('settle', 300);
              return own.do(step, 'undo', 'settled');
            })(),
          ]);
          await own.do(step, 'undo', `after-${ack}`);
          throw err;
        }
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('own-cleanup', null);
    await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    await engine.runs.cancel(runId);
    // The settle branch ran in an execution after the one that delivered the cancel.
    await until('the settled cleanup step', async () => (await engine.runs.get(runId)).steps.some((s) => s.name === 'undo' && s.status === 'succeeded'), 15_000);
    await pause(200);
    const mid = await engine.runs.get(runId);
    expect(mid.steps.find((s) => s.name === 'ack')?.status).toBe('waiting');
    await engine.signal(runId, 'ack', 'ok');
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('cancelled');
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([
      ['long', 'failed'],
      ['ack', 'succeeded'],
      ['settle', 'succeeded'],
      ['undo', 'succeeded'],
      ['undo#2', 'succeeded'],
    ]);
    expect(view.steps[0]!.error?.name).toBe(new CancelledError('x').name);
    expect(view.steps.find((s) => s.name === 'undo#2')?.result).toBe('after-ok|');
    expect(own.problems(view)).toEqual([]);
  });
}
