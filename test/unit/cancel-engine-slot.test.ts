// Sim seeds 284, 287, 7000547: at maxConcurrentRuns 1, a run whose cancel was accepted waited
// for an engine slot (to have its cancel delivered) while another run's step held the only
// slot waiting for a rate window, so the cancel landed, and its grace began, an hour late.
// Fix (src/adapters/sqlite/executor.ts `cancelling`): a run with a cancel asked does not wait
// for an engine slot.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '../../compose/testing.ts';
import { manual, queue, workflow } from '../../sdk/index.ts';

describe('a cancel and the engine slots', () => {
  it('a cancel is delivered while every engine slot is held by a step waiting for a rate window', async () => {
    const q = queue('hourly', { rateLimit: { limit: 1, period: '1h' } });
    const rated = workflow('rated', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('call', { queue: q }, () => 'called'));
    });
    const cleaned: string[] = [];
    const sleeper = workflow('sleeper', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.sleep('nap', '1d');
        } finally {
          cleaned.push('cleanup');
        }
      });
    });
    const t = await createTestEngine({ workflows: [rated, sleeper], maxConcurrentRuns: 1 });
    try {
      const { runId: sleeping } = await t.engine.trigger('sleeper', null);
      await t.idle();
      expect((await t.engine.runs.get(sleeping)).status).toBe('sleeping');
      const { runId: first } = await t.engine.trigger('rated', null);
      await t.idle();
      expect((await t.engine.runs.get(first)).status).toBe('succeeded');
      // The hour's one start is taken: this run's step waits for the next window, in the
      // engine's only slot.
      const { runId: waiting } = await t.engine.trigger('rated', null);
      await t.idle();
      expect((await t.engine.runs.get(waiting)).queued).toBeDefined();
      const at = t.now();
      await t.engine.runs.cancel(sleeping);
      await t.idle();
      const view = await t.engine.runs.get(sleeping);
      expect(view.status).toBe('cancelled');
      expect(cleaned).toEqual(['cleanup']);
      expect(t.now()).toBe(at); // no window had to open for it
      expect((await t.engine.runs.get(waiting)).status).toBe('running');
      await t.advance('1h');
      expect((await t.engine.runs.get(waiting)).status).toBe('succeeded');
    } finally {
      await t.close();
    }
  });
});
