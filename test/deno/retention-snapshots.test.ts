// Retention and workflow-file snapshots (issue 13, docs/data.md), on real Deno children: a
// sweep that removes the last runs of a file version removes that version's snapshot too,
// and keeps the snapshot of the file's current version (its next run uses it).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-retention-snap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const source = (tag: string) => `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-kept', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('a', () => '${tag}'));
});
`;

it('removing the last runs of a version removes its snapshot; the current version\'s stays', async () => {
  const file = join(dir, 'kept.ts');
  writeFileSync(file, source('v1'));
  const data = join(dir, 'data');
  const engine = await createEngine({ dataDir: data, workflowFiles: [file], log: { level: 'silent' }, retention: { maxAge: 1 } });
  await engine.start();
  try {
    await engine.workflows.approve('file-kept');
    const v1 = await engine.result((await engine.trigger('file-kept', null)).runId, { timeout: '60s' });
    writeFileSync(file, source('v2'));
    const v2 = await engine.result((await engine.trigger('file-kept', null)).runId, { timeout: '60s' });
    expect([v1.output, v2.output]).toEqual(['v1', 'v2']);
    const snap = (v: string) => join(data, 'runner', 'snapshots', v);
    expect(existsSync(snap(v1.version)) && existsSync(snap(v2.version))).toBe(true);
    await new Promise((r) => setTimeout(r, 20)); // both runs older than maxAge (1 ms)
    const report = await engine.gc();
    expect(report.runs).toBe(2);
    expect(report.unreferencedVersions.sort()).toEqual([v1.version, v2.version].sort());
    expect(report.snapshotsRemoved).toEqual([v1.version]);
    expect(existsSync(snap(v1.version))).toBe(false);
    expect(existsSync(snap(v2.version))).toBe(true);
  } finally {
    await engine.stop();
  }
}, 120_000);
