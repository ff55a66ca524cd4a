// Child processes of tests (an engine a test kills, the `tranquil` CLI) run from an esbuild
// bundle of the repo's sources instead of through tsx's loader: a start costs a fraction of the
// CPU (tsx transforms and resolves each of ~300 source files per process on Node 20, which has
// no compile cache; docs/testing.md, "Child processes"). TRANQUIL_TEST_CLI=source runs them
// the old way, through tsx.
import { build, type BuildOptions } from 'esbuild';
import { mkdirSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..');

/** True when children should run the sources through tsx, as before the bundles. */
export const fromSource = process.env.TRANQUIL_TEST_CLI === 'source';

/** What the production build leaves to node_modules too (scripts/build.mjs): the native
 *  addon, packages loaded through createRequire or a lazy import of a package, OpenTelemetry
 *  (one API copy shared with the app's SDK). The bundle must sit below the repo root for
 *  these to resolve (and for packageRoot() to find the repo's package.json). */
export const bundleOptions: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // zod too: a config file's schemas then come from the same zod as the engine's, as with the sources.
  external: ['better-sqlite3', '@restatedev/*', 'cron-parser', 'yaml', '@marcbachmann/cel-js', 'chokidar', '@opentelemetry/*', 'zod'],
  sourcemap: 'linked',
  logLevel: 'warning',
  // Bundled CommonJS packages may require() Node built-ins; ESM output has no require of its own.
  banner: { js: "import { createRequire as __tranquilCreateRequire } from 'node:module'; const require = __tranquilCreateRequire(import.meta.url);" },
};

export interface ChildEntry {
  /** The node arguments that run the entry: [bundle] or ['--import', 'tsx', entry]. */
  args: string[];
  /** Deletes the bundle (afterAll). */
  remove(): void;
}

/** Bundles one child entry (a .ts file that imports the engine from source) for this test file. */
export async function childEntry(entry: string): Promise<ChildEntry> {
  if (fromSource) return { args: ['--import', 'tsx', entry], remove: () => {} };
  const dir = join(REPO, 'node_modules/.cache/tranquil-children');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${basename(entry, '.ts')}-${process.pid}.mjs`);
  await build({ ...bundleOptions, entryPoints: [entry], outfile: out, absWorkingDir: REPO });
  return { args: [out], remove: () => { rmSync(out, { force: true }); rmSync(`${out}.map`, { force: true }); } };
}
