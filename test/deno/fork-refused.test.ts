// runs.fork of a workflow file's run is refused in one line saying why (docs/control.md, Fork):
// a fork runs the original's version, and a file's version is a snapshot that may be
// collected once its runs ended. The refusal is the engine's, before any backend work: the
// SQLite backend stands for both.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createEngine, NotSupportedError } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it('runs.fork refuses a run of a workflow file, naming it and why; nothing is started', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-fork-file-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'flow.ts'), `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-forkable', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('a', () => 1));
});
`);
  const engine = await createEngine({ backend: 'sqlite', dataDir: join(dir, 'data'), workflowFiles: [join(dir, 'flow.ts')], log: { level: 'silent' } });
  await engine.start();
  try {
    const { runId } = await engine.trigger('file-forkable', null);
    const refused = engine.runs.fork(runId, { from: 'a' });
    await expect(refused).rejects.toBeInstanceOf(NotSupportedError);
    await expect(engine.runs.fork(runId, { from: 'a' })).rejects.toThrow(`runs.fork: run ${runId} is of workflow file 'file-forkable', which cannot be forked yet (a fork runs the original's version, and a file's snapshot of it may be gone); rerun it instead`);
    expect((await engine.runs.list()).map((r) => r.runId)).toEqual([runId]);
  } finally {
    await engine.stop();
  }
}, 60_000);
