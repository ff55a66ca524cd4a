// npm run build: bundles the engine for production into dist/ with esbuild.
//
//   dist/index.js    @tranquil/engine          (compose/index.ts)
//   dist/testing.js  @tranquil/engine/testing  (compose/testing.ts)
//   dist/sdk.js      @tranquil/sdk             (sdk/index.ts; also @tranquil/engine/sdk)
//   dist/cli.js      the `tranquil` command    (cli/main.ts; bin/tranquil.mjs runs it when
//                    the package is installed, the sources when run from a checkout)
//   dist/types/      .d.ts for consumers (tsc, tsconfig.build.json; see buildTypes)
//   dist/chunks/     the one chunk the entries share (one copy: the sdk's errors are the
//                    engine's; see oneCoreChunk), and the lazy chunks behind dynamic import():
//                    the Restate adapter and the webhook listener (hono) load only when used.
//
// package.json "exports" resolve to dist/ (types -> dist/types, default -> dist/*.js); inside
// the repo the custom condition "tranquil-source" (tsconfig paths, vitest aliases, the bin's
// source hook) keeps development on the TypeScript sources without a build. The Restate SDK
// stays external and loads from node_modules on first use; better-sqlite3's JavaScript is
// bundled, its native addon and error class are the installed package's (see driverBundled).
// Whitespace, syntax and local identifiers are minified: every engine holds the source text of
// what it loaded (V8 keeps it for lazy compilation), so a shorter bundle is less idle memory
// (964 -> 638 KiB of JS; docs/performance.md, "Idle memory"). No keepNames: it wraps every function
// and class the engine makes in a call that defines its `.name`, closures made per step
// included (~1 KB of garbage per step, ~10% of it promoted at 100 concurrent runs). Nothing
// reads those names: errors name themselves (`errorName`, src/domain/errors.ts; checked on
// dist/ by test/e2e/build.test.ts). `node --enable-source-maps` maps stack traces back.
//
// `node scripts/build.mjs --bench` also bundles the benchmark children that measure the build
// (bench/child-idle.ts, bench/history-child.ts, bench/child-citizen.ts, bench/child-scale.ts) into bench/.build/. They import the engine
// and the sdk from dist/ (external), so they measure exactly what dist ships.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(REPO, 'dist');
const BENCH_OUT = join(REPO, 'bench', '.build');

/** The public entry points: dist file name -> source. */
export const ENTRIES = { index: 'compose/index.ts', testing: 'compose/testing.ts', sdk: 'sdk/index.ts' };
/** The CLI: built with the entries (shares their chunks: one engine per process) but exempt
 *  from the lazy-load check, since a command line parser is what it loads first. */
const CLI_ENTRY = { cli: 'cli/main.ts' };
/** Packages that must never load with the engine until used (lazy import() only). */
const NOT_AT_LOAD = /(^|node_modules\/)(hono|@hono\/node-server|@restatedev\/[^/]+|commander|chokidar)(\/|$)/;

// Packages the engine requires on first use through createRequire (sync, so an engine that
// does not use them never loads them): cron-parser (sdk/cron-parser-loader.ts: schedule
// triggers), yaml and @marcbachmann/cel-js (src/runtime/plain/lazy-deps.ts: plain
// workflows). esbuild cannot follow createRequire, so they stay external and resolve from
// node_modules (they are dependencies) at that first use; bundled, their code would be read,
// parsed and held in memory by every engine (docs/performance.md: idle RSS of the build).
const LAZY_REQUIRED = ['cron-parser', 'yaml', '@marcbachmann/cel-js'];
// chokidar (the watcher of `tranquil dev`, cli/dev.ts, imported on use) stays external too:
// bundled behind an import() of a package, its chunk shared esbuild helpers with the core and
// the engine's start loaded one more file (test/e2e/build.test.ts).
const LAZY_IMPORTED = ['chokidar'];
// OpenTelemetry (docs/observability.md) resolves from node_modules: the API must be the one
// copy the app's SDK registers with (a bundled copy keeps a proxy of its own that an SDK
// registered after the engine was created never reaches), and the SDK and Prometheus exporter
// load only when `tranquil serve` serves /metrics.
const OTEL = ['@opentelemetry/*'];

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', '@restatedev/*', ...LAZY_REQUIRED, ...LAZY_IMPORTED, ...OTEL],
  keepNames: false,
  minifyWhitespace: true,
  minifySyntax: true,
  minifyIdentifiers: true,
  sourcemap: 'linked',
  metafile: true,
  absWorkingDir: REPO,
  logLevel: 'warning',
  // Bundled CommonJS packages may require() Node built-ins; ESM output has no require of its own.
  banner: { js: "import { createRequire as __tranquilCreateRequire } from 'node:module'; const require = __tranquilCreateRequire(import.meta.url);" },
};

// zod's classic namespace (`z`) re-exports every locale (`z.locales`, ~300 KB of the bundle)
// and the engine uses only English, which zod registers itself (zod/v4/classic/schemas.js
// imports locales/en.js directly). The locale index becomes just `en`: the other locales are
// never read. Nothing in the engine calls z.config or names z.locales.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (a) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(a.importer) ? { path: join(dirname(a.importer), '..', 'locales', 'index.js'), namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (a) => ({
      contents: "export { default as en } from './en.js';",
      loader: 'js',
      resolveDir: dirname(a.path),
    }));
  },
};

// The engine's start loads as few files as possible: each module the start imports costs node
// a resolution (a dozen path and file-URL operations), and ~150 of them made node's path
// functions hot enough for V8 to start its optimizing compiler at every engine start, ~3 MiB
// of node's binary kept resident for it (docs/performance.md, "Idle memory"). esbuild splits code
// by the exact set of entries and lazy import() targets that reach it, which cut the start
// into 24 files; so every other entry and every lazy module also imports the engine's
// index: all the code the start needs then shares one set of readers and lands in one chunk.
// Lazy modules still load only when used, and nothing runs earlier: an entry's own imports
// evaluate first, and a lazy module is only ever imported after the engine.
const CORE = join(REPO, ENTRIES.index);
/** The .ts files the sources load with `import('./relative.ts')` (every dynamic import in
 *  the repo is such a literal). */
function dynamicImportTargets() {
  const found = [];
  for (const dir of ['compose', 'src', 'sdk', 'cli']) {
    for (const f of listFiles(join(REPO, dir))) {
      if (!f.endsWith('.ts')) continue;
      for (const m of readFileSync(f, 'utf8').matchAll(/import\(\s*['"](\.[^'"]+\.ts)['"]\s*\)/g)) found.push(resolve(dirname(f), m[1]));
    }
  }
  return found;
}

const oneCoreChunk = {
  name: 'one-core-chunk',
  setup(b) {
    // Every dynamic import's target, found in the sources before the build: filled only from
    // onResolve, the set raced esbuild's parallel loads (a lazy module loaded before its
    // dynamic import was resolved got no core import, and the build split a second chunk
    // that index.js loads at start: seen once in three clean CI runs).
    const lazy = new Set(dynamicImportTargets());
    const others = new Set([...Object.values(ENTRIES), ...Object.values(CLI_ENTRY)].map((e) => join(REPO, e)).filter((e) => e !== CORE));
    b.onResolve({ filter: /\.ts$/ }, (a) => {
      if (a.kind === 'dynamic-import' && a.path.startsWith('.')) lazy.add(resolve(a.resolveDir, a.path));
      return undefined;
    });
    b.onLoad({ filter: /\.ts$/ }, (a) => {
      if (!lazy.has(a.path) && !others.has(a.path)) return undefined;
      return { contents: `${readFileSync(a.path, 'utf8')}\nimport ${JSON.stringify(CORE)};\n`, loader: 'ts', resolveDir: dirname(a.path) };
    });
  },
};

// better-sqlite3's JavaScript is bundled (loading its ~15 CommonJS files was itself ~150 path
// resolutions; the addon is opened by path, src/adapters/sqlite/native-addon.ts). Two of its
// requires stay the installed package's: its error class (a host that uses better-sqlite3 too
// shares the one addon, which throws the class it was first given: one class for both), and
// `bindings`, needed only when the addon is not where native-addon.ts looks, resolved from
// better-sqlite3's own directory as it would be unbundled.
const DRIVER_LIB = /[\\/]node_modules[\\/]better-sqlite3[\\/]lib[\\/]/;
const driverBundled = {
  name: 'driver-bundled',
  setup(b) {
    b.onResolve({ filter: /^\.\/sqlite-error$/ }, (a) => (DRIVER_LIB.test(a.importer) ? { path: 'better-sqlite3/lib/sqlite-error.js', external: true } : undefined));
    b.onResolve({ filter: /^bindings$/ }, (a) => (DRIVER_LIB.test(a.importer) ? { path: 'bindings', namespace: 'driver-bindings' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'driver-bindings' }, () => ({
      contents: "const { createRequire } = require('node:module'); module.exports = createRequire(require.resolve('better-sqlite3/package.json'))('bindings');",
      loader: 'js',
    }));
  },
};

/** Removes files under dir that the build did not write (old content-hashed chunks). */
function prune(dir, written) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) prune(p, written);
    else if (!written.has(p)) rmSync(p, { force: true });
  }
}

/** Output files reachable from `out` through static imports only (what loads with it). */
function staticClosure(meta, out, seen = new Set()) {
  if (seen.has(out)) return seen;
  seen.add(out);
  for (const imp of meta.outputs[out]?.imports ?? []) if (imp.kind === 'import-statement' && !imp.external) staticClosure(meta, imp.path, seen);
  return seen;
}

function checkLoadSet(meta) {
  const problems = [];
  for (const [out, o] of Object.entries(meta.outputs)) {
    if (!o.entryPoint || !Object.values(ENTRIES).includes(o.entryPoint)) continue;
    for (const f of staticClosure(meta, out)) {
      for (const input of Object.keys(meta.outputs[f]?.inputs ?? {})) if (NOT_AT_LOAD.test(input)) problems.push(`${o.entryPoint} loads ${input} at import`);
      for (const imp of meta.outputs[f]?.imports ?? []) if (imp.external && imp.kind === 'import-statement' && NOT_AT_LOAD.test(imp.path)) problems.push(`${o.entryPoint} imports ${imp.path} at load`);
    }
  }
  if (problems.length) throw new Error(`lazy-only packages in the static load set:\n  ${[...new Set(problems)].join('\n  ')}`);
}

export async function buildDist() {
  const r = await esbuild.build({
    ...common,
    entryPoints: { ...ENTRIES, ...CLI_ENTRY },
    outdir: DIST,
    external: common.external.filter((x) => x !== 'better-sqlite3'),
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [zodEnglishOnly, oneCoreChunk, driverBundled],
  });
  checkLoadSet(r.metafile);
  const written = new Set(Object.keys(r.metafile.outputs).map((p) => join(REPO, p)));
  for (const f of listFiles(join(DIST, 'types'))) written.add(f); // buildTypes owns dist/types
  prune(DIST, written);
  return r.metafile;
}

function listFiles(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => (statSync(join(dir, n)).isDirectory() ? listFiles(join(dir, n)) : [join(dir, n)]));
}

/** dist/types: tsc emits declarations of the public entries (tsconfig.build.json); then their
 *  relative imports are rewritten from './x.ts' (the sources' style, allowed only with
 *  allowImportingTsExtensions) to './x.js', which every consumer resolution mode maps to
 *  './x.d.ts'. Returns the number of .d.ts files. */
export function buildTypes() {
  const out = join(DIST, 'types');
  rmSync(out, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(REPO, 'tsconfig.build.json')], { cwd: REPO, stdio: 'inherit' });
  const files = listFiles(out).filter((f) => f.endsWith('.d.ts'));
  const rel = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]*?)\.ts(['"])/g;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const fixed = text.replace(rel, '$1$2.js$3');
    if (fixed !== text) writeFileSync(f, fixed);
  }
  return files.length;
}

export async function buildBench() {
  const toDist = new Map(Object.entries(ENTRIES).map(([name, src]) => [join(REPO, src), join(DIST, `${name}.js`)]));
  toDist.set('@tranquil/sdk', join(DIST, 'sdk.js'));
  toDist.set('@tranquil/engine', join(DIST, 'index.js'));
  toDist.set('@tranquil/engine/testing', join(DIST, 'testing.js'));
  const r = await esbuild.build({
    ...common,
    entryPoints: { 'child-idle': 'bench/child-idle.ts', 'history-child': 'bench/history-child.ts', 'child-citizen': 'bench/child-citizen.ts', 'child-scale': 'bench/child-scale.ts', 'scale-runs-child': 'bench/scale-runs-child.ts' },
    outdir: BENCH_OUT,
    // better-sqlite3 bundled as dist bundles it: the idle bench's node + driver child then
    // loads the driver the way the engine does.
    external: common.external.filter((x) => x !== 'better-sqlite3'),
    splitting: true,
    chunkNames: '[name]-[hash]', // next to the entries: the relative paths to dist/ hold in every file
    plugins: [driverBundled, {
      name: 'engine-from-dist',
      setup(b) {
        b.onResolve({ filter: /.*/ }, (a) => {
          const target = toDist.get(a.path) ?? (a.path.startsWith('.') ? toDist.get(resolve(a.resolveDir, a.path)) : undefined);
          if (!target) return undefined;
          let rel = relative(BENCH_OUT, target);
          if (!rel.startsWith('.')) rel = `./${rel}`;
          return { path: rel, external: true };
        });
      },
    }],
  });
  // A child that bundled engine sources itself would measure a second copy, not dist.
  const own = Object.keys(r.metafile.inputs).filter((f) => /^(src|compose|sdk)\//.test(f));
  if (own.length) throw new Error(`bench children bundle engine sources instead of importing dist/: ${own.join(', ')}`);
  prune(BENCH_OUT, new Set(Object.keys(r.metafile.outputs).map((p) => join(REPO, p))));
  return r.metafile;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  const meta = await buildDist();
  if (process.argv.includes('--bench')) await buildBench();
  // --js: JavaScript only (the bench and the dist smoke test need no declarations; tsc takes ~10-40 s).
  if (!process.argv.includes('--js')) buildTypes();
  const bytes = Object.entries(meta.outputs).filter(([p]) => p.endsWith('.js')).reduce((a, [, o]) => a + o.bytes, 0);
  console.error(`built dist/ (${(bytes / 1024).toFixed(0)} KiB of JS)${process.argv.includes('--bench') ? ' and bench/.build/' : ''} in ${(performance.now() - t0).toFixed(0)} ms`);
}
