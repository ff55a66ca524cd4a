// The watchdog of workflow-file children (issue 11), on real Deno children: a step body that
// blocks its child's event loop stops the heartbeats (or outlives its step timeout); the
// engine kills the child by its PID, the attempt counts as failed, and the step is retried
// in a new child.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('watchdog (SQLite, real Deno child)', () => {
  it('a hung child is killed (heartbeat timeout; then the step timeout) and each step is retried', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-watchdog-'));
    dirs.push(dataDir);
    // Step 'spin' has no timeout: only the silence of the heartbeats finds it. Step
    // 'spin-timed' has a 300 ms timeout, found first (the heartbeat timeout is longer).
    const engine = await createEngine({
      dataDir, workflowFiles: [join(import.meta.dirname, 'fixtures', 'hung.ts')], log: { level: 'silent' },
      deno: { heartbeatInterval: 100, heartbeatTimeout: 2_500 },
    });
    await engine.start();
    try {
      await engine.workflows.approve('file-hung');
      const { runId } = await engine.trigger('file-hung');
      const view = await engine.result(runId, { timeout: '90s' });
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual({ a: { attempt: 2 }, b: { attempt: 2 } });
      expect(view.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
        ['spin', 'succeeded', 2],
        ['spin-timed', 'succeeded', 2],
      ]);
    } finally {
      await engine.stop();
    }
  }, 120_000);
});
