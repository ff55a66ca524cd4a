import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';
import { SlowFirstSequencer } from './test/schedule/slow-first.ts';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** Files that must not share the machine with another test file: they run after the others,
 *  one at a time. The cluster starts several restate-servers and haproxy in network
 *  namespaces (as root) and times its fail-overs; crash-start's child relies on a checkpoint
 *  having happened within a short wait before it is killed (it failed once beside another file);
 *  the soak slice judges memory and event-loop growth, which a neighbour's load would blur. */
export const ALONE = ['test/cluster/**/*.test.ts', 'test/sqlite/crash-start.test.ts', 'test/soak/soak.test.ts'];

// Two files at a time: most of the suite's time is spent waiting (on restate-server, Deno
// children, real sleeps), so two share the 2-core machine CI runs on about twice as fast as
// one (docs/testing.md). Tests in a file still run one after another.
// `common` is the test config without the projects, for configs that run a list of files
// (vitest.quick.config.ts, the reporter's fixture).
export const common = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  maxWorkers: 2,
  // The last line names every group that was skipped and what installs what it needs.
  reporters: ['default', './test/reporter/skipped-summary.ts'],
  sequence: { sequencer: SlowFirstSequencer },
};

export default defineConfig({
  resolve: {
    alias: {
      '@tranquil/sdk': here('./sdk/index.ts'),
      '@tranquil/engine/testing': here('./compose/testing.ts'),
      '@tranquil/engine': here('./compose/index.ts'),
    },
  },
  test: {
    ...common,
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ALONE } },
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
