import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@tranquil/sdk': here('./sdk/index.ts'),
      '@tranquil/engine/testing': here('./compose/testing.ts'),
      '@tranquil/engine': here('./compose/index.ts'),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The last line names every group that was skipped and what installs what it needs.
    reporters: ['default', './test/reporter/skipped-summary.ts'],
  },
});
