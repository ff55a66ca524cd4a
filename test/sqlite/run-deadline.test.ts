// SQLite's in-process sessions meet a run's deadline in the middle of a step body too
// (docs/control.md): the body is told to stop (its AbortSignal), the step gets the
// TimeoutError, cleanup runs, and the run fails with it. (A journaled clock, Restate's, meets
// it at the next step boundary or wake: the conformance cases cover both.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, TimeoutError, workflow } from '@tranquil/sdk';

const dirs: string[] = [];
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('a deadline that passes while a body runs aborts the body, runs the cleanup and fails the run', async () => {
  const seen: string[] = [];
  const wf = workflow('slow-body', { timeout: 600 }, (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      try {
        await step.do('work', { retries: { limit: 1 } }, ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => {
          seen.push(`aborted:${(signal.reason as Error).name}`);
          reject(signal.reason as Error);
        })));
      } catch (err) {
        await step.do('undo', () => void seen.push(`undo:${err instanceof TimeoutError}`));
        throw err;
      }
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-deadline-'));
  dirs.push(dir);
  const engine = await createEngine({ dataDir: dir, workflows: [wf] });
  engines.push(engine);
  await engine.start();
  const { runId } = await engine.trigger('slow-body', null);
  const view = await engine.result(runId, { timeout: '10s' });
  expect(view.status).toBe('failed');
  expect(view.error?.message).toMatch(/^run deadline .* passed/);
  expect(seen).toEqual(['aborted:TimeoutError', 'undo:true']);
  expect((await engine.runs.get(runId)).steps.map((s) => [s.name, s.status, s.error?.name])).toEqual([
    ['work', 'failed', 'TimeoutError'],
    ['undo', 'succeeded', undefined],
  ]);
});
