// npm run build: bundles the engine for production into dist/ with esbuild.
//
//   dist/index.js    @tranquil/engine          (compose/index.ts)
//   dist/testing.js  @tranquil/engine/testing  (compose/testing.ts)
//   dist/sdk.js      @tranquil/sdk             (sdk/index.ts)
//   dist/chunks/     code the entries share (one copy: the sdk's errors are the engine's), and
//                    the lazy chunks behind dynamic import(): the Restate adapter and the
//                    webhook listener (hono) load only when used.
//
// package.json "exports" still point at the TypeScript sources (run with tsx in development);
// dist is what a production deployment runs with plain `node`. Native and optional heavy
// packages stay external and load from node_modules: better-sqlite3, @restatedev/*.
// Whitespace and syntax are minified (less source text held in memory), names are kept
// (errors rebuild by class name); `node --enable-source-maps` maps stack traces back.
//
// `node scripts/build.mjs --bench` also bundles the benchmark children that measure the build
// (bench/child-idle.ts, bench/history-child.ts) into bench/.build/. They import the engine
// and the sdk from dist/ (external), so they measure exactly what dist ships.
import * as esbuild from 'esbuild';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(REPO, 'dist');
const BENCH_OUT = join(REPO, 'bench', '.build');

/** The public entry points: dist file name -> source. */
export const ENTRIES = { index: 'compose/index.ts', testing: 'compose/testing.ts', sdk: 'sdk/index.ts' };
/** Packages that must never load with the engine until used (lazy import() only). */
const NOT_AT_LOAD = /(^|node_modules\/)(hono|@hono\/node-server|@restatedev\/[^/]+|commander)(\/|$)/;

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', '@restatedev/*'],
  keepNames: true,
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  metafile: true,
  absWorkingDir: REPO,
  logLevel: 'warning',
  // Bundled CommonJS packages may require() Node built-ins; ESM output has no require of its own.
  banner: { js: "import { createRequire as __tranquilCreateRequire } from 'node:module'; const require = __tranquilCreateRequire(import.meta.url);" },
};

// In the sources cron-parser is required on first use through createRequire (sync, so an
// engine without schedules never loads it; see sdk/cron-parser-loader.ts).
// esbuild cannot follow createRequire, so here the loader becomes a plain require(), which
// esbuild bundles: one copy of cron-parser, initialised on first call.
const bundledCronLoader = {
  name: 'bundled-cron-loader',
  setup(b) {
    b.onLoad({ filter: /[\\/]sdk[\\/]cron-parser-loader\.ts$/ }, () => ({
      contents: "let mod; export function cronParser() { return (mod ??= require('cron-parser')); }",
      loader: 'js',
      resolveDir: join(REPO, 'sdk'),
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
    entryPoints: ENTRIES,
    outdir: DIST,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [bundledCronLoader],
  });
  checkLoadSet(r.metafile);
  prune(DIST, new Set(Object.keys(r.metafile.outputs).map((p) => join(REPO, p))));
  return r.metafile;
}

export async function buildBench() {
  const toDist = new Map(Object.entries(ENTRIES).map(([name, src]) => [join(REPO, src), join(DIST, `${name}.js`)]));
  toDist.set('@tranquil/sdk', join(DIST, 'sdk.js'));
  toDist.set('@tranquil/engine', join(DIST, 'index.js'));
  toDist.set('@tranquil/engine/testing', join(DIST, 'testing.js'));
  const r = await esbuild.build({
    ...common,
    entryPoints: { 'child-idle': 'bench/child-idle.ts', 'history-child': 'bench/history-child.ts' },
    outdir: BENCH_OUT,
    splitting: true,
    chunkNames: '[name]-[hash]', // next to the entries: the relative paths to dist/ hold in every file
    plugins: [{
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
  const bytes = Object.entries(meta.outputs).filter(([p]) => p.endsWith('.js')).reduce((a, [, o]) => a + o.bytes, 0);
  console.error(`built dist/ (${(bytes / 1024).toFixed(0)} KiB of JS)${process.argv.includes('--bench') ? ' and bench/.build/' : ''} in ${(performance.now() - t0).toFixed(0)} ms`);
}
