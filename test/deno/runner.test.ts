// Workflow files on a real Deno child (issue 11), SQLite backend: the child drives the shared
// RunSession through the step protocol; its permissions are exactly what the file declared.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../compose/index.ts';

const FIX = join(import.meta.dirname, 'fixtures');
const dirs: string[] = [];

/** An engine running `files`, each file's declaration approved (nothing runs before that;
 *  test/deno/approval.test.ts). */
async function engineWith(files: string[], backend: 'sqlite' | 'restate'): Promise<Engine> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-deno-'));
  dirs.push(dataDir);
  const engine = await createEngine({ backend, dataDir, workflowFiles: files.map((f) => join(FIX, f)), log: { level: 'silent' } });
  await engine.start();
  for (const wf of engine.registry.all()) await engine.workflows.approve(wf.definition.name);
  return engine;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(['sqlite', 'restate'] as const)('workflow files in Deno children (%s)', (backend) => {
  it('a file with two steps and a sleep runs to success, each execution in a child', async () => {
    const engine = await engineWith(['two-steps.ts'], backend);
    try {
      const { runId } = await engine.trigger('file-two-steps', { n: 1 });
      const view = await engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual({ n: 4, key: `${runId}/second` });
      expect(view.steps.map((s) => [s.name, s.kind, s.status, s.attempts])).toEqual([
        ['first', 'do', 'succeeded', 1],
        ['pause', 'sleep', 'succeeded', 1],
        ['second', 'do', 'succeeded', 1],
      ]);
      expect(view.version).toMatch(/^[0-9a-f]{24}$/);
    } finally {
      await engine.stop();
    }
  }, 90_000);

  it('without net, a step cannot reach another local port: the step records Deno\'s permission error', async () => {
    let reached = 0;
    const other: Server = createServer((s) => (reached++, s.destroy()));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as { port: number }).port;
    const engine = await engineWith(['no-net.ts'], backend);
    try {
      const { runId } = await engine.trigger('file-no-net', { port });
      const view = await engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('failed');
      const step = view.steps[0]!;
      expect(step.status).toBe('failed');
      expect(step.error?.name).toBe('NotCapable');
      expect(step.error?.message).toContain(`Requires net access to "127.0.0.1:${port}"`);
      expect(reached).toBe(0);
    } finally {
      await engine.stop();
      other.close();
    }
  }, 90_000);

  it('a declared path can be read, an undeclared one cannot', async () => {
    const engine = await engineWith(['reads.ts'], backend);
    try {
      const { runId } = await engine.trigger('file-reads', { ok: join(FIX, 'readable', 'ok.txt'), other: join(FIX, 'two-steps.ts') });
      const view = await engine.result(runId, { timeout: '60s' });
      expect(view.status).toBe('succeeded');
      const out = view.output as { declared: string; undeclared: string };
      expect(out.declared).toBe('declared');
      expect(out.undeclared).toMatch(/^NotCapable: Requires read access to ".*two-steps\.ts"/);
    } finally {
      await engine.stop();
    }
  }, 90_000);
});
