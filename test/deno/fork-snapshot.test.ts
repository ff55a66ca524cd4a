// runs.fork of a workflow file's run (docs/control.md, Fork): a fork runs the ORIGINAL's
// version, through the approval gate of that version (not the file's version now), and is
// refused in one line naming the version when that version's snapshot is gone (the engine's
// refusal, before any backend work). Both backends: SQLite gates a run when it is created and
// at each execution, Restate in the run handler before its code runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { until } from '../conformance/files/harness.ts';
import { createEngine, NotSupportedError } from '../../compose/index.ts';
import { snapshotsDir } from '../../src/adapters/deno/snapshot.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const flow = (tag: string, permissions: string) => `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-forkable', { permissions: ${permissions} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const a = await step.do('a', () => '${tag}-a');
    const b = await step.do('b', () => '${tag}-b');
    return { a, b };
  });
});
`;

it.each(['sqlite', 'restate'] as const)('%s: a fork of a file run runs its approved version while the file now declares more (unapproved); with that snapshot gone it is refused, naming the version; nothing is started', async (backend) => {
  const dir = mkdtempSync(join(tmpdir(), `tranquil-fork-file-${backend}-`));
  dirs.push(dir);
  const file = join(dir, 'flow.ts');
  writeFileSync(file, flow('v1', '{}'));
  const dataDir = join(dir, 'data');
  const engine = await createEngine({ backend, dataDir, workflowFiles: [file], log: { level: 'silent' } });
  await engine.start();
  try {
    await engine.workflows.approve('file-forkable');
    const { runId } = await engine.trigger('file-forkable', null);
    const first = await engine.result(runId, { timeout: '60s' });
    expect(first.output).toEqual({ a: 'v1-a', b: 'v1-b' });

    // v2 declares a grant nobody approved: a new run of it is blocked ...
    writeFileSync(file, flow('v2', `{ net: ['example.com:443'] }`));
    const v2run = await engine.trigger('file-forkable', null);
    await until('the v2 run to be blocked', async () => (await engine.runs.get(v2run.runId)).status === 'blocked');
    // ... but a fork runs the original's version, whose declaration is approved.
    const fork = await engine.runs.fork(runId, { from: 'b', runId: `${runId}-fork` });
    expect(fork.reused.map((s) => s.name)).toEqual(['a']);
    const forked = await engine.result(fork.runId, { timeout: '60s' });
    expect(forked.status).toBe('succeeded');
    expect(forked.version).toBe(first.version);
    expect(forked.output).toEqual({ a: 'v1-a', b: 'v1-b' });

    // The original's snapshot gone (the file on disk is another version: it cannot be taken again).
    rmSync(join(snapshotsDir(dataDir), first.version), { recursive: true, force: true });
    const before = (await engine.runs.list()).map((r) => r.runId).sort();
    const refused = engine.runs.fork(runId, { from: 'b' });
    await expect(refused).rejects.toBeInstanceOf(NotSupportedError);
    await expect(engine.runs.fork(runId, { from: 'b' })).rejects.toThrow(`runs.fork: run ${runId} is of version ${first.version} of workflow file 'file-forkable', whose snapshot is gone (a fork runs the original's version); rerun it instead, at the file's version now`);
    expect((await engine.runs.list()).map((r) => r.runId).sort()).toEqual(before);
    await engine.runs.cancel(v2run.runId);
  } finally {
    await engine.stop();
  }
}, 90_000);
