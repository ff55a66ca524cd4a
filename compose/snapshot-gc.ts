// Retention of workflow file snapshots (docs/data.md): after a sweep removed the last runs
// of a version, that version's snapshot directory (<dataDir>/runner/snapshots/<version>/,
// written by the Deno runner) goes too, unless it is a registered file's current version
// (its next run uses it). Snapshots are content-addressed by version, so nothing else can
// refer to a directory once no run and no registered file does.
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { snapshotsDir } from '../src/adapters/deno/snapshot.ts';
import type { WorkflowRegistry } from '../src/runtime/registry.ts';

export function snapshotDropper(dataDir: string, registry: WorkflowRegistry): (versions: readonly string[]) => string[] {
  return (versions) => {
    const current = new Set(registry.all().filter((w) => w.file).map((w) => w.version));
    const dropped: string[] = [];
    for (const v of versions) {
      if (current.has(v) || !/^[0-9a-f]{6,64}$/.test(v)) continue;
      const dir = join(snapshotsDir(dataDir), v);
      if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
      rmSync(dir, { recursive: true, force: true });
      dropped.push(v);
    }
    return dropped;
  };
}
