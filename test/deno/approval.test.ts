// Approval of a workflow file's permission declaration (issue 11), on a real Deno child, on
// both backends: nothing runs before approval; a run of an unapproved or changed declaration
// is `blocked` with the difference as its reason; approving releases it and it runs. (On
// Restate a run shows `pending` until its invocation has looked at the approvals: the test
// waits for `blocked` there; docs/runner.md.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';
import type { Engine } from '../../src/runtime/engine.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const flow = (permissions: string, result: string) => `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-approval', { permissions: ${permissions} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('only', () => (${result})));
});
`;

async function statusSettles(engine: Engine, runId: string): Promise<string> {
  // Restate: the invocation decides `blocked` a moment after the trigger (bounded wait).
  for (let i = 0; i < 400; i++) {
    const s = (await engine.runs.get(runId)).status;
    if (s !== 'pending' && s !== 'running') return s;
    await new Promise((r) => setTimeout(r, 25));
  }
  return (await engine.runs.get(runId)).status;
}

describe.each(['sqlite', 'restate'] as const)('approval of a workflow file declaration (%s, real Deno child)', (backend) => {
  it('unapproved -> blocked; approve -> runs; a changed declaration -> the next run blocked with the diff; approve again -> released', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-approval-'));
    dirs.push(dir);
    const file = join(dir, 'flow.ts');
    writeFileSync(file, flow(`{ env: ['TRANQUIL_TEST_A'] }`, `'v1'`));
    const engine = await createEngine({ backend, dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' } });
    await engine.start();
    try {
      // 1. Never approved: the run is created blocked, and never started.
      const d0 = await engine.workflows.declaration('file-approval');
      expect(d0).toMatchObject({ approved: false, declaration: { env: ['TRANQUIL_TEST_A'] }, diff: { added: ['env:TRANQUIL_TEST_A'], removed: [] } });
      const first = await engine.trigger('file-approval');
      expect(await statusSettles(engine, first.runId)).toBe('blocked');
      const blocked = await engine.runs.get(first.runId);
      expect(blocked.steps).toEqual([]);
      expect(blocked.error?.name).toBe('ApprovalRequired');
      expect(blocked.error?.message).toContain('never approved: added env:TRANQUIL_TEST_A');
      const why = await engine.runs.explain(first.runId);
      expect(why.summary).toContain('is blocked until its permission declaration is approved');
      expect(why.details).toContain('approve with: tranquil workflows approve file-approval');
      await engine.executor.idle();
      expect((await engine.runs.get(first.runId)).status).toBe('blocked');

      // 2. Approving releases it: it runs in its child.
      const a1 = await engine.workflows.approve('file-approval', { hash: d0.hash });
      expect(a1.released).toEqual([first.runId]);
      expect((await engine.result(first.runId, { timeout: '60s' })).output).toBe('v1');
      // An approved declaration: the next run starts at once.
      const again = await engine.trigger('file-approval');
      expect((await engine.result(again.runId, { timeout: '60s' })).output).toBe('v1');

      // 3. The declaration changes on disk: the next trigger describes the file again and
      // creates the run blocked, with the difference.
      writeFileSync(file, flow(`{ net: ['api.github.com:443'] }`, `'v2'`));
      const second = await engine.trigger('file-approval');
      expect(await statusSettles(engine, second.runId)).toBe('blocked');
      const held = await engine.runs.get(second.runId);
      expect(held.version).not.toBe(blocked.version);
      expect(held.error?.message).toContain(`changed since the approval ${d0.hash}: added net:api.github.com:443; removed env:TRANQUIL_TEST_A`);
      expect(held.error?.message).toContain('approve with: tranquil workflows approve file-approval');
      expect((await engine.runs.explain(second.runId)).details.slice(0, 2)).toEqual(['added: net:api.github.com:443', 'removed: env:TRANQUIL_TEST_A']);
      // An approval naming the hash the user saw before the change approves nothing.
      await expect(engine.workflows.approve('file-approval', { hash: d0.hash })).rejects.toThrow(/\(the file changed since it was shown\); nothing approved/);
      expect((await engine.runs.get(second.runId)).status).toBe('blocked');

      // 4. Approving the new declaration releases it; it runs the new version.
      const a2 = await engine.workflows.approve('file-approval');
      expect(a2.released).toEqual([second.runId]);
      expect(a2.hash).not.toBe(d0.hash);
      const done = await engine.result(second.runId, { timeout: '60s' });
      expect(done.status).toBe('succeeded');
      expect(done.output).toBe('v2');
    } finally {
      await engine.stop();
    }
  }, 120_000);
});
