// Test scratch space for SQLite tests: temporary data dirs and test engines, all closed and
// removed after each test (one place instead of the same afterEach in every file).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { TestEngine } from '@tranquil/engine/testing';

/** Registers the cleanup; `open` takes engines to close, `newDir()` makes a removed dir. */
export function scratch(prefix: string): { open: TestEngine[]; newDir: () => string } {
  const open: TestEngine[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close().catch(() => {});
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const newDir = () => {
    const d = mkdtempSync(join(tmpdir(), `tranquil-${prefix}-`));
    dirs.push(d);
    return d;
  };
  return { open, newDir };
}
