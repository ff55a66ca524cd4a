// Per-run snapshots of a workflow file AND its local imports (issue 11; docs/runner.md,
// Snapshots): the closure scan, the version digest, removal of unreferenced snapshots, and on
// a real Deno child: editing an imported file while a run sleeps does not change what that
// run executes, while a new run executes the edit.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';
import { localClosure, specifiersIn } from '../../src/adapters/deno/local-imports.ts';
import { findSnapshot, listSnapshots, readManifest, removeUnreferencedSnapshots, takeSnapshot, versionOf } from '../../src/adapters/deno/snapshot.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-snap-'));
  dirs.push(d);
  return d;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the local import closure of a workflow file', () => {
  it('finds static, side-effect, re-export and dynamic imports; skips comments', () => {
    const src = `
import { a } from './a.ts';
import './side.ts';
export { b } from "../up/b.ts";
// import { no } from './commented.ts';
/* import './block.ts'; */
const m = await import('./dyn.ts');
import { workflow } from '@tranquil/sdk';
import z from 'npm:zod';
`;
    expect(specifiersIn(src).sort()).toEqual(['../up/b.ts', './a.ts', './dyn.ts', './side.ts', '@tranquil/sdk', 'npm:zod'].sort());
  });

  it('follows relative imports transitively (cycles once), refuses an absolute import and one leaving the directory', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'flows'));
    mkdirSync(join(dir, 'flows', 'shared'));
    writeFileSync(join(dir, 'flows', 'main.ts'), `import { x } from './lib.ts';\nexport default x;\n`);
    writeFileSync(join(dir, 'flows', 'lib.ts'), `import { y } from './shared/y.ts';\nimport './main.ts';\nexport const x = y;\n`);
    writeFileSync(join(dir, 'flows', 'shared', 'y.ts'), `export const y = 1;\n`);
    const files = localClosure(join(dir, 'flows', 'main.ts')).map((f) => f.path);
    expect(files).toEqual([join(dir, 'flows', 'main.ts'), join(dir, 'flows', 'lib.ts'), join(dir, 'flows', 'shared', 'y.ts')]);

    const data = join(dir, 'data');
    const before = versionOf(join(dir, 'flows', 'main.ts'));
    const snap = takeSnapshot(data, join(dir, 'flows', 'main.ts'));
    expect(snap.digest).toBe(before);
    expect(readFileSync(join(snap.dir, 'src', 'shared', 'y.ts'), 'utf8')).toBe('export const y = 1;\n');
    expect(readManifest(data, snap.digest)?.main).toBe('main.ts');
    writeFileSync(join(dir, 'flows', 'shared', 'y.ts'), `export const y = 2;\n`); // a deep import changed
    expect(versionOf(join(dir, 'flows', 'main.ts'))).not.toBe(before);
    expect(readFileSync(join(snap.dir, 'src', 'shared', 'y.ts'), 'utf8')).toBe('export const y = 1;\n');

    writeFileSync(join(dir, 'flows', 'abs.ts'), `import { y } from '${join(dir, 'flows', 'shared', 'y.ts')}';\n`);
    expect(() => versionOf(join(dir, 'flows', 'abs.ts'))).toThrow(/by absolute path/);
    // Only the workflow's own directory is snapshotted (issue 36).
    mkdirSync(join(dir, 'up'));
    writeFileSync(join(dir, 'up', 'z.ts'), `export const z = 1;\n`);
    writeFileSync(join(dir, 'flows', 'up.ts'), `import { z } from '../up/z.ts';\n`);
    expect(() => versionOf(join(dir, 'flows', 'up.ts'))).toThrow(`imports '../up/z.ts', which resolves to ${join(dir, 'up', 'z.ts')}, outside the workflow's directory ${join(dir, 'flows')}`);
  });

  it('removeUnreferencedSnapshots removes only old snapshots no run references', () => {
    const dir = tempDir();
    const data = join(dir, 'data');
    const file = join(dir, 'w.ts');
    const digests: string[] = [];
    for (const v of [1, 2, 3]) {
      writeFileSync(file, `export default ${v};\n`);
      digests.push(takeSnapshot(data, file, 1_000).digest);
    }
    writeFileSync(file, `export default 4;\n`);
    const young = takeSnapshot(data, file, 10_000_000).digest;
    const removed = removeUnreferencedSnapshots(data, new Set([digests[1]!]), { now: 10_000_000, minAgeMs: 60_000 });
    expect(removed.sort()).toEqual([digests[0]!, digests[2]!].sort());
    expect(listSnapshots(data).map((s) => s.digest).sort()).toEqual([digests[1]!, young].sort());
    expect(findSnapshot(data, digests[0]!)).toBeUndefined();
  });
});

describe('snapshots of local imports on a real Deno child (SQLite)', () => {
  it('editing an imported file while a run sleeps does not change what that run executes', async () => {
    const dir = tempDir();
    const file = join(dir, 'imports.ts');
    const lib = join(dir, 'lib.ts');
    writeFileSync(file, `
import { workflow, manual } from '@tranquil/sdk';
import { tag } from './lib.ts';
export default workflow('file-imports', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => tag());
    await step.sleep('pause', (input as { ms: number }).ms);
    const b = await step.do('b', () => tag());
    return [a, b];
  });
});
`);
    writeFileSync(lib, `export const tag = () => 'v1';\n`);
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('file-imports');
      const old = await engine.trigger('file-imports', { ms: 3_000 });
      while ((await engine.runs.get(old.runId)).status !== 'sleeping') await sleep(20);
      writeFileSync(lib, `export const tag = () => 'v2';\n`); // only the import changes
      const edited = await engine.trigger('file-imports', { ms: 0 });
      const oldView = await engine.result(old.runId, { timeout: '60s' });
      const newView = await engine.result(edited.runId, { timeout: '60s' });
      expect(oldView.output).toEqual(['v1', 'v1']);
      expect(newView.output).toEqual(['v2', 'v2']);
      expect(newView.version).not.toBe(oldView.version);
      expect(existsSync(join(dir, 'data', 'runner', 'snapshots', oldView.version, 'src', 'lib.ts'))).toBe(true);
    } finally {
      await engine.stop();
    }
  }, 120_000);
});

describe('paths Deno names oddly', () => {
  // Given a path, Deno reports a '%' that starts no escape unencoded (file:///d/%/x.ts), which
  // made the module-graph check throw "URIError: URI malformed" (the CLI fuzz found it with
  // --data-dir %). A '%41' must stay three characters, not become 'A'.
  it("runs a file with a local import from a directory and data dir named with '%' and '%41'", async () => {
    const dir = join(tempDir(), '%', 'flows%41');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'pct.ts');
    writeFileSync(file, `
import { workflow, manual } from '@tranquil/sdk';
import { tag } from './lib%25.ts';
import { mark } from './odd%.ts';
export default workflow('pct', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('a', () => tag() + mark));
});
`);
    writeFileSync(join(dir, 'lib%.ts'), `export const tag = () => 'percent';\n`);
    writeFileSync(join(dir, 'odd%.ts'), `export const mark = '!';\n`);
    const dataDir = join(dir, '..', '%');
    const engine = await createEngine({ dataDir, workflowFiles: [file], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('pct');
      const { runId } = await engine.trigger('pct', {});
      const view = await engine.result(runId, { timeout: '60s' });
      expect(view.error).toBeUndefined();
      expect(view.output).toBe('percent!');
    } finally {
      await engine.stop();
    }
  }, 120_000);
});
