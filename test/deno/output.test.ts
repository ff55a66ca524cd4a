// A workflow file's child output (issue 11: "stdout/stderr kept per run, bounded, shown by
// runs describe") on both backends, on a real Deno child: what the reader behind `runs
// describe` returns once the run finished. On Restate it is kept in the tqoutput object, so any
// replica's CLI reads it (test/deno/cli.test.ts drives the CLI itself on SQLite).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';
import { resolveConfig } from '../../compose/config.ts';
import { openRunReader } from '../../compose/run-reader.ts';
import { removeDataDir } from '../restate/data-dir.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDataDir(d);
});

const chatty = `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-chatty', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < 2000; i++) console.log('line ' + i + ' ' + 'x'.repeat(50));
    console.log('END');
    console.error('to stderr');
    return step.do('s', () => 7);
  });
});
`;

describe.each(['sqlite', 'restate'] as const)('child output of a workflow-file run (%s, real Deno child)', (backend) => {
  it('keeps the exit and bounded stdout/stderr of the last child for runs describe', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-output-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'chatty.ts'), chatty);
    const dataDir = join(dir, 'data');
    const engine = await createEngine({ backend, dataDir, workflowFiles: [join(dir, 'chatty.ts')], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('file-chatty');
      const { runId } = await engine.trigger('file-chatty', null);
      expect(await engine.result(runId, { timeout: '60s' })).toMatchObject({ status: 'succeeded', output: 7 });
      const reader = (await openRunReader(resolveConfig({ backend, dataDir })))!;
      try {
        // Kept once the child exited (on Restate by a one-way call: it lands a moment later).
        let child = await reader.childOutput!(runId);
        for (let i = 0; i < 200 && !child; i++) child = (await new Promise((r) => setTimeout(r, 50)), await reader.childOutput!(runId));
        expect(child).toBeDefined();
        expect(child!.exit).toBe('code 0');
        expect(child!.pid).toBeGreaterThan(0);
        expect(child!.stdout.endsWith('END\n')).toBe(true);
        expect(child!.stdout.length).toBeLessThanOrEqual(64 * 1024); // bounded: the last 64 KiB
        expect(child!.stdout).not.toContain('line 0 ');
        expect(child!.stderr).toBe('to stderr\n');
      } finally {
        await reader.close();
      }
    } finally {
      await engine.stop();
    }
  }, 120_000);
});

it('on Restate the kept output goes with the run, after the retention (here 3 s)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-output-ret-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'chatty.ts'), chatty);
  const dataDir = join(dir, 'data');
  const engine = await createEngine({ backend: 'restate', dataDir, workflowFiles: [join(dir, 'chatty.ts')], retention: { maxAge: 3000 }, log: { level: 'silent' } });
  await engine.start();
  try {
    await engine.workflows.approve('file-chatty');
    const { runId } = await engine.trigger('file-chatty', null);
    await engine.result(runId, { timeout: '60s' });
    const reader = (await openRunReader(resolveConfig({ backend: 'restate', dataDir })))!;
    try {
      let child = await reader.childOutput!(runId);
      for (let i = 0; i < 200 && !child; i++) child = (await new Promise((r) => setTimeout(r, 50)), await reader.childOutput!(runId));
      expect(child?.stderr).toBe('to stderr\n');
      for (let i = 0; i < 300 && child; i++) child = (await new Promise((r) => setTimeout(r, 100)), await reader.childOutput!(runId));
      expect(child).toBeUndefined();
    } finally {
      await reader.close();
    }
  } finally {
    await engine.stop();
  }
}, 120_000);
