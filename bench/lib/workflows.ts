// The workflows every backend runs. A step result is ~200 bytes of JSON, the same size the
// raw SQLite baseline writes per journal row, so the comparison is like for like.
import { workflow, manual } from '../../sdk/index.ts';

export const STEP_RESULT = { ok: true, v: 'x'.repeat(170), n: 12345 };
export const STEPS_PER_RUN = 10;

/** 10 x step.do, each returning ~200 B. */
export const tenSteps = workflow('bench-ten-steps', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < STEPS_PER_RUN; i++) await step.do(`s${i}`, () => STEP_RESULT);
    return { steps: STEPS_PER_RUN };
  });
});

/** Where wake times are reported (in-process; the body runs once per run on first wake). */
export const wakeProbe: { onWake: (at: number, now: number) => void } = { onWake: () => {} };

/** Sleeps until input.at (epoch ms, wall clock), then one step that reports its lateness. */
export const sleeper = workflow('bench-sleeper', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const at = (input as { at: number }).at;
    await step.sleepUntil('until', at);
    await step.do('woke', () => {
      const now = Date.now();
      wakeProbe.onWake(at, now);
      return now;
    });
    return null;
  });
});

export const ALL_WORKFLOWS = [tenSteps, sleeper];
