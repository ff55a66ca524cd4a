// The watchdog of workflow-file children (issue 11), on real Deno children: a step body that
// blocks its child's event loop stops the heartbeats (or outlives its step timeout); the
// engine kills the child by its PID, the attempt counts as failed, and the step is retried
// in a new child.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(['sqlite', 'restate'] as const)('watchdog (%s, real Deno child)', (backend) => {
  it('a hung child is killed (heartbeat timeout; then the step timeout) and each step is retried', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-watchdog-'));
    dirs.push(dataDir);
    // Step 'spin' has no timeout: only the silence of the heartbeats finds it. Step
    // 'spin-timed' has a 300 ms timeout, found first (the heartbeat timeout is longer).
    const engine = await createEngine({
      backend, dataDir, workflowFiles: [join(import.meta.dirname, 'fixtures', 'hung.ts')], log: { level: 'silent' },
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

describe.each(['sqlite', 'restate'] as const)('cancel of a hung child (%s, real Deno child)', (backend) => {
  it('the cancel frame cannot be heard by a blocked child: after the cleanup grace it is killed by PID and the run is cancelled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-watchdog-cancel-'));
    dirs.push(dir);
    const out = join(dir, 'out');
    mkdirSync(out);
    writeFileSync(join(dir, 'stuck.ts'), `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-stuck', { permissions: { write: ['./out'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => step.do('stuck', () => {
    Deno.writeTextFileSync((input as { out: string }).out + '/pid', String(Deno.pid));
    for (;;) { /* never answers, not even a cancel */ }
  }));
});
`);
    // The heartbeat timeout is far away: only the cancel's backstop can end this child.
    const engine = await createEngine({
      backend, dataDir: join(dir, 'data'), workflowFiles: [join(dir, 'stuck.ts')], log: { level: 'silent' }, cancelGrace: 300,
      deno: { heartbeatTimeout: 600_000 },
    });
    await engine.start();
    try {
      await engine.workflows.approve('file-stuck');
      const { runId } = await engine.trigger('file-stuck', { out });
      while (!existsSync(join(out, 'pid'))) await new Promise((r) => setTimeout(r, 20));
      const pid = Number(readFileSync(join(out, 'pid'), 'utf8'));
      await engine.runs.cancel(runId);
      const view = await engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('cancelled');
      expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    } finally {
      await engine.stop();
    }
  }, 120_000);
});
