// The order vitest starts test files in: the longest first, so the last files to finish are
// short ones and the two workers end together (files run two at a time: vitest.config.ts).
// Vitest orders by the durations it cached from the last run, or without a cache (CI's
// fresh install) by file size, which puts the 5-line files that run the conformance suite
// on Restate last. So the slowest files are named here, longest first (measured on the
// 2-core machine, docs/testing.md); the rest follow in vitest's own order.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Paths from the repo root, longest first (seconds on 2 cores, running alone). */
export const SLOW_FIRST = [
  // Each simulation slice keeps both cores busy (sim:long's two workers): it starts beside a
  // Restate conformance half, which mostly waits on its server, not beside the other slice
  // (the two side by side took 350-365 s each, against ~140 s alone).
  'test/conformance/restate-a.test.ts', // ~160
  'test/reliability/simulation-a.test.ts', // ~140
  'test/conformance/restate-b.test.ts', // ~160
  'test/reliability/simulation-b.test.ts', // ~130
  'test/conformance/sqlite.test.ts', // ~110
  'test/conformance/files-sqlite.test.ts', // ~100
  'test/conformance/files-restate-a.test.ts', // ~90
  'test/conformance/files-restate-b.test.ts', // ~90
  'test/e2e/serve.test.ts', // ~45
  'test/crash/sigkill.test.ts', // ~40
  'test/reliability/sigkill-storm.test.ts', // ~35
  'test/e2e/panel.test.ts', // ~35
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(root, f.moduleId));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    const group = (f: TestSpecification) => f.project.config.sequence.groupOrder;
    // Stable: the groups keep their order (vitest runs them one after another), and the
    // files not listed keep vitest's.
    return base
      .map((f, at) => ({ f, at }))
      .sort((a, b) => group(a.f) - group(b.f) || rank(a.f) - rank(b.f) || a.at - b.at)
      .map(({ f }) => f);
  }
}
