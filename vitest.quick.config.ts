// `npm run test:quick`: a few minutes instead of ~20, for the edit-test loop. The pure units,
// the architecture rules, the whole conformance suite on SQLite (the default backend), the
// SQLite adapter's own tests, plain-data workflows, and one file of each other part that runs
// in seconds (a real Deno child, the simulation's regression seeds). Not here: Restate, the
// cluster, the browser, the CLI/serve processes, the crash and kill-storm tests, the fuzzers,
// the other Deno files. `npm test` runs everything; CI runs `npm test`.
import { defineConfig } from 'vitest/config';
import main, { CLI_BUNDLE, common } from './vitest.config.ts';

export default defineConfig({
  ...main,
  // One project: none of these needs to run alone (vitest.config.ts ALONE); two files at a time.
  test: {
    ...common,
    globalSetup: [CLI_BUNDLE],
    include: [
      'test/unit/**/*.test.ts',
      'test/architecture.test.ts',
      'test/reporter/**/*.test.ts',
      'test/conformance/sqlite.test.ts',
      'test/sqlite/**/*.test.ts',
      'test/plain/**/*.test.ts',
      'test/deno/runner.test.ts',
      'test/deno/protocol.test.ts',
      'test/deno/permissions.test.ts',
      'test/reliability/regressions.test.ts',
    ],
    // Each spawns CLI processes (seconds of tsx start-up apiece) or fuzzes for long.
    exclude: ['test/plain/cli.test.ts', 'test/plain/loader.fuzz.test.ts'],
  },
});
