// Conformance scenarios for lifecycle notifications (issue 15; runtime/notifier.ts):
// engine.on('run.succeeded' | 'run.failed' | 'run.retrying', ...) gets each transition once,
// with the same fields on every backend, and after a restart the transitions that happened
// while no handler listened, never the ones already delivered.
import { expect } from 'vitest';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import type { LifecycleEvent } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function notificationScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('notifications: run.succeeded, run.failed and run.retrying, each transition once', async () => {
    const wfs = [
      workflow('note-ok', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.do('a', () => 1));
      }),
      workflow('note-fails', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('charge', () => {
            throw new TerminalError('card declined');
          });
        });
      }),
      workflow('note-flaky', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) =>
          step.do('call', { retries: { limit: 3, delay: '1h', backoff: 'constant', jitter: false } }, ({ attempt }) => {
            throw new Error(`remote 503 #${attempt}`);
          }));
      }),
    ];
    const { engine } = await boot(wfs);
    const got: LifecycleEvent[] = [];
    for (const type of ['run.succeeded', 'run.failed', 'run.retrying'] as const) engine.on(type, (e) => void got.push(e));
    expect(() => engine.on('run.exploded' as never, () => {})).toThrow(/lifecycle event/);
    const ok = (await engine.trigger('note-ok', null)).runId;
    const fails = (await engine.trigger('note-fails', null)).runId;
    const flaky = (await engine.trigger('note-flaky', null)).runId;
    for (const id of [ok, fails]) await engine.result(id, { timeout: '20s' });
    await until('three runs notified', () => got.length >= 3, 20_000);
    await pause(700); // a few more ticks: nothing is delivered twice
    const of = (id: string) => got.filter((e) => e.runId === id).map((e) => e.type);
    expect(of(ok)).toEqual(['run.succeeded']);
    expect(of(fails)).toEqual(['run.failed']);
    // Retrying for an hour: one transition, one event.
    expect(of(flaky)).toEqual(['run.retrying']);
    expect(got.find((e) => e.runId === flaky)).toMatchObject({ workflow: 'note-flaky', status: 'retrying', step: 'call', attempt: 1, error: { name: 'Error', message: 'remote 503 #1' } });
    expect(got.find((e) => e.runId === fails)).toMatchObject({
      type: 'run.failed', workflow: 'note-fails', status: 'failed', step: 'charge', attempt: 1, error: { name: 'TerminalError', message: 'card declined' },
    });
    expect(got.find((e) => e.runId === ok)).toEqual({ type: 'run.succeeded', runId: ok, workflow: 'note-ok', status: 'succeeded', at: (await engine.runs.get(ok)).updatedAt });
  }, 60_000);

  test('notifications: after a restart the host gets what it missed, not what it already had', async () => {
    const wf = workflow('note-later', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => {
        if (input === 'slow') await step.sleep('nap', 500);
        return step.do('a', () => input);
      });
    });
    const { engine, dir } = await boot([wf]);
    const first: string[] = [];
    engine.on('run.succeeded', (e) => void first.push(e.runId));
    const fast = (await engine.trigger('note-later', 'fast')).runId;
    await until('fast run notified', () => first.includes(fast));
    const slow = (await engine.trigger('note-later', 'slow')).runId;
    await until('slow run asleep', async () => (await engine.runs.get(slow)).status === 'sleeping');
    // The app goes down; its next life finishes the slow run before anyone subscribes.
    const again = await restart(engine, [wf], dir);
    await again.result(slow, { timeout: '20s' });
    const second: string[] = [];
    again.on('run.succeeded', (e) => void second.push(e.runId));
    await until('missed run notified', () => second.includes(slow));
    await pause(700);
    expect(second).toEqual([slow]);
    expect(first).toEqual([fast]);
  }, 60_000);
}
