// The script tests run as `node <it> ...` for the `tranquil` command: the bundle built once per
// run by test/setup/cli-bundle.ts, or bin/tranquil.mjs on the sources (TRANQUIL_TEST_CLI=source,
// or a run without that globalSetup).
import { join, resolve } from 'node:path';
import { inject } from 'vitest';

/** In a test file (top level included): inject reads the values the run provided. */
export function tranquilCli(): string {
  return inject('tranquilCli') ?? join(resolve(import.meta.dirname, '..'), 'bin/tranquil.mjs');
}
