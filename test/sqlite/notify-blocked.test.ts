// run.blocked on SQLite (runtime/notifier.ts): a run whose workflow the restarted engine no
// longer registers turns `blocked` when it wakes, and the host hears it once. (Restate blocks
// a run only when it pauses an invocation, which no short test provokes; the other lifecycle
// events are conformance cases: test/conformance/notifications.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, type LifecycleEvent } from '@tranquil/engine';

it('a run whose workflow is gone after a restart is blocked, and run.blocked says so once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-notify-blocked-'));
  const napper = workflow('napper', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.sleep('nap', 300));
  });
  const other = workflow('other', (w) => {
    w.trigger(manual());
    w.run(async () => 1);
  });
  const first = await createEngine({ dataDir: dir, workflows: [napper] });
  await first.start();
  const { runId } = await first.trigger('napper', null);
  for (let i = 0; i < 200 && (await first.runs.get(runId)).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 10));
  await first.stop();
  const second = await createEngine({ dataDir: dir, workflows: [other] });
  const got: LifecycleEvent[] = [];
  second.on('run.blocked', (e) => void got.push(e));
  try {
    await second.start();
    for (let i = 0; i < 400 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 600));
    const view = await second.runs.get(runId);
    expect(view.status).toBe('blocked');
    expect(got).toEqual([{ type: 'run.blocked', runId, workflow: 'napper', status: 'blocked', at: view.updatedAt }]);
    expect((await second.runs.explain(runId)).next).toBe("Register workflow 'napper' with the engine (its config or workflows dir), then restart it: `tranquil serve`.");
  } finally {
    await second.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
