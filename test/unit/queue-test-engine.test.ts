// Queues on the test engine's manual clock (found while the simulation learned queues, issue
// 39). A step waiting for a rate window kept its session in flight, and the window's timer was
// a real setTimeout measured on the manual clock: TestEngine.idle() (and so advance(), which
// waits for idle first) never returned, and the window never opened, since only advance()
// moves that clock ('rate-wait-blocks-idle'). Fix: the queue's window timer is set on the
// engine's clock, and an execution whose every operation in flight is a wait for a slot counts
// as idle (RunSession.slotBound).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '../../compose/testing.ts';
import { manual, queue, workflow } from '../../sdk/index.ts';

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Fails instead of hanging the test file when the engine never becomes idle. */
const within = <T>(what: string, p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`${what} did not return within 3 s`)), 3000).unref())]);

describe('queues on a test engine', () => {
  it('idle() returns while a body waits for a rate window, and advance() opens the window', async () => {
    const starts: Record<string, number> = {};
    let t!: TestEngine;
    const q = queue('rated', { concurrency: 2, rateLimit: { limit: 3, period: 5000 } });
    const wf = workflow('rated-fan-out', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) =>
        Promise.all(['a', 'b', 'c', 'd'].map((n) => step.do(n, { queue: q, key: 'k' }, async () => {
          starts[n] = t.now();
          await turn();
          return n;
        }))));
    });
    t = await createTestEngine({ workflows: [wf] });
    try {
      const { runId } = await t.engine.trigger('rated-fan-out', null);
      const t0 = t.now();
      await within('idle()', t.idle());
      // Three starts in the first window; the fourth waits for it to slide.
      expect(Object.keys(starts).sort()).toEqual(['a', 'b', 'c']);
      expect((await t.engine.runs.get(runId)).status).toBe('running');
      await within('advance()', t.advance('1m'));
      const view = await t.engine.runs.get(runId);
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual(['a', 'b', 'c', 'd']);
      expect(starts.d).toBe(t0 + 5000);
    } finally {
      await t.close();
    }
  });

  // Seed 7000113: a step waiting for a slot when the engine stopped was recorded failed with
  // 'engine stopped' (the stop gave its wait up, queuedAttempt made that a failed attempt, and
  // the stop's flush wrote it); a restart then went on past a step that never ran. Fix
  // (run-session.ts queued): a wait given up by a stop ends the session, recording nothing.
  it('a step waiting for a slot when the engine stops is not recorded failed; it runs after the restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tq-queue-stop-'));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const q = queue('one', { concurrency: 1 });
    const wf = workflow('one-at-a-time', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        try {
          return await step.do('call', { queue: q, retries: { limit: 1 } }, async () => {
            if ((input as { hold: boolean }).hold) await held;
            return 'ran';
          });
        } catch (e) {
          return `caught ${(e as Error).message}`;
        }
      });
    });
    try {
      let t = await createTestEngine({ dataDir, workflows: [wf] });
      await t.engine.trigger('one-at-a-time', { hold: true }, { runId: 'holder' });
      for (let i = 0; i < 20; i++) await turn(); // the holder's body runs (it never becomes idle)
      await t.engine.trigger('one-at-a-time', { hold: false }, { runId: 'waiter' });
      for (let i = 0; i < 20; i++) await turn();
      expect((await t.engine.runs.get('waiter')).queued?.queue).toBe('one');
      await t.close();
      release();
      t = await createTestEngine({ dataDir, workflows: [wf] });
      try {
        await within('advance()', t.advance('1m'));
        const waiter = await t.engine.runs.get('waiter');
        expect(waiter.status).toBe('succeeded');
        expect(waiter.output).toBe('ran');
        expect(waiter.steps.map((s) => s.status)).toEqual(['succeeded']);
      } finally {
        await t.close();
      }
    } finally {
      release();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
