// Conformance scenarios for cancel with cleanup (issue 19, defect 7; docs/semantics.md
// `## Cancel`), called from runConformance(): a cancel throws CancelledError into the code at
// the steps it waits on, `catch`/`finally` run cleanup steps (journaled, retried), then the
// run ends `cancelled`; a second cancel ends it at once. The same on every backend.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CancelledError, manual, workflow } from '@tranquil/sdk';
import { createEngine, type Engine } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function cancelScenarios({ test, boot, restart, until }: ScenarioKit, backend: string): void {
  test('cancel throws CancelledError into a sleeping, a waiting and an executing run; cleanup steps run, then it ends cancelled', async () => {
    const released: string[] = [];
    const wf = workflow('cleanup', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => {
        const hold = await step.do('reserve', () => `hold-${input}`);
        try {
          if (input === 'sleep') await step.sleep('wait-a-day', '1d');
          else if (input === 'wait') await step.waitForEvent('approve');
          else await step.do('work', ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))));
          return 'not cancelled';
        } catch (err) {
          // Cleanup is a normal step: journaled, with its own retries.
          await step.do('release', { retries: { limit: 3, delay: 10, backoff: 'constant', jitter: false } }, ({ attempt }) => {
            if (attempt === 1) throw new Error('flaky release');
            released.push(`${hold}:${err instanceof CancelledError}`);
            return 'released';
          });
          throw err;
        }
      });
    });
    const { engine } = await boot([wf]);
    for (const kind of ['sleep', 'wait', 'work']) {
      const { runId } = await engine.trigger('cleanup', kind);
      await until(`${kind} run to reach its step`, async () => (await engine.runs.get(runId)).steps.length >= (kind === 'work' ? 1 : 2));
      await pause(150);
      await engine.runs.cancel(runId);
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.status, kind).toBe('cancelled');
      const byName = new Map(view.steps.map((s) => [s.name, s]));
      const waited = byName.get(kind === 'sleep' ? 'wait-a-day' : kind === 'wait' ? 'approve' : 'work');
      expect(waited, kind).toMatchObject({ status: 'failed', error: { name: 'CancelledError' } });
      expect(byName.get('release'), kind).toMatchObject({ status: 'succeeded', attempts: 2, result: 'released' });
    }
    expect(released).toEqual(['hold-sleep:true', 'hold-wait:true', 'hold-work:true']);
  });

  test('cleanup survives a restart: the cancel is thrown at the same step on replay and cleanup goes on', async () => {
    let cleanups = 0;
    const wf = workflow('cleanup-restart', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.sleep('long', '1d');
        } finally {
          await step.do('undo-1', () => ++cleanups);
          await step.sleep('settle', 300);
          await step.do('undo-2', () => ++cleanups);
        }
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('cleanup-restart', null);
    await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    await engine.runs.cancel(runId);
    await until('first cleanup step', async () => (await engine.runs.get(runId)).steps.some((s) => s.name === 'undo-1' && s.status === 'succeeded'));
    const again = await restart(engine, [wf], dir);
    const view = await again.result(runId, { timeout: '20s' });
    expect(view.status).toBe('cancelled');
    expect(view.steps.map((s) => [s.name, s.status])).toEqual([
      ['long', 'failed'],
      ['undo-1', 'succeeded'],
      ['settle', 'succeeded'],
      ['undo-2', 'succeeded'],
    ]);
    expect(cleanups).toBe(2);
  });

  test('a second cancel ends a run at once, even while its cleanup runs', async () => {
    const wf = workflow('stubborn', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.sleep('long', '1d');
        } catch {
          // A cleanup that ignores its abort signal and never ends.
          await step.do('stuck-cleanup', () => new Promise(() => {}));
        }
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('stubborn', null);
    await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    await engine.runs.cancel(runId);
    await until('cleanup to start', async () => (await engine.runs.get(runId)).steps.some((s) => s.name === 'long' && s.status === 'failed'));
    await pause(200);
    expect((await engine.runs.get(runId)).status).toBe('running');
    await engine.runs.cancel(runId);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('cancelled');
  });

  test('cleanup that outlives the grace bound (config cancelGrace) ends the run cancelled', async () => {
    let after = 0;
    const wf = workflow('slow-cleanup', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.sleep('long', '1d');
        } finally {
          await step.sleep('slow-undo', '1h');
          await step.do('never-reached', () => ++after);
        }
      });
    });
    const dir = mkdtempSync(join(tmpdir(), `tranquil-conf-${backend}-grace-`));
    let engine: Engine | undefined;
    try {
      engine = await createEngine({ backend: backend as 'sqlite' | 'restate', dataDir: dir, workflows: [wf], cancelGrace: '1s' });
      await engine.start();
      const { runId } = await engine.trigger('slow-cleanup', null);
      await until('run to sleep', async () => (await engine!.runs.get(runId)).status === 'sleeping');
      await engine.runs.cancel(runId);
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.status).toBe('cancelled');
      expect(view.steps.map((s) => s.name)).toEqual(['long', 'slow-undo']);
      expect(after).toBe(0);
      await expect(createEngine({ backend: 'sqlite', dataDir: dir, workflows: [wf], cancelGrace: 'soon' })).rejects.toThrow(/cancelGrace/);
    } finally {
      await engine?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
}
