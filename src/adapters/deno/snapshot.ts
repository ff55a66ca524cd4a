// Content-addressed snapshots of workflow files under <dataDir>/runner/snapshots/<digest>/:
// the file and its local imports as they were (src/, see local-imports.ts), plus the
// generated entries that statically import the copy (a static import needs no read
// permission, so the child is granted nothing for its own code). A run executes the snapshot
// of its recorded version, never the live files. Everything under the data dir is owner-only
// (dirs 0700, files 0600, from the first mkdir: issue 36). Also: listing and removing snapshots (for
// `workflows versions` and the retention of run data), and the shared import map that
// resolves @tranquil/sdk, zod and devalue for children.
import { nodeCrypto } from '../../runtime/node-crypto.ts';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { localClosure } from './local-imports.ts';
import { packageRoot } from './package-root.ts';
import { once } from '../../domain/once.ts';

const REPO = packageRoot(); // also right from the build (dist/chunks/*.js)
const RUNNER = join(REPO, 'runner');
const MANIFEST = 'manifest.json';

export interface Snapshot {
  digest: string;
  dir: string;
  /** Entry that runs the workflow: `deno run <flags> run.ts <port> <maxPayloadBytes>`. */
  runEntry: string;
  /** Entry that prints the description. */
  describeEntry: string;
}

export function digestOf(text: string | Buffer): string {
  return nodeCrypto().createHash('sha256').update(text).digest('hex').slice(0, 24);
}

export function snapshotsDir(dataDir: string): string {
  return join(dataDir, 'runner', 'snapshots');
}

function paths(dataDir: string, digest: string): Snapshot {
  const dir = join(snapshotsDir(dataDir), digest);
  return { digest, dir, runEntry: join(dir, 'run.ts'), describeEntry: join(dir, 'describe.ts') };
}

/** What a snapshot holds (manifest.json): the live paths it was taken from and when. */
export const manifestSchema = once(() => z.object({
  source: z.string(),
  /** The main file, relative to `root` (its copy is `src/<main>`). */
  main: z.string(),
  root: z.string(),
  files: z.array(z.object({ path: z.string(), sha256: z.string() })),
  takenAt: z.number(),
}));
export type Manifest = z.infer<ReturnType<typeof manifestSchema>>;

interface Closure {
  digest: string;
  root: string;
  main: string;
  files: { rel: string; content: Buffer; sha256: string }[];
}

/** The common directory of the closure's files (a '../' import widens it). */
function commonRoot(paths: readonly string[]): string {
  let root = dirname(paths[0]!);
  const outside = (p: string) => relative(root, p).split(sep)[0] === '..';
  for (const p of paths) while (outside(p)) root = dirname(root);
  return root;
}

/** Reads the file and its local imports once and computes the version digest: the content
 *  digest for a file without local imports (as before imports were followed), else the
 *  digest of the sorted list of (path relative to the common root, sha-256 of content) and
 *  the main file's path, so an edit of any imported file is a new version. */
function closureOf(file: string): Closure {
  const found = localClosure(file);
  const root = commonRoot(found.map((f) => f.path));
  const files = found.map((f) => ({ rel: relative(root, f.path).split(sep).join('/'), content: f.content, sha256: nodeCrypto().createHash('sha256').update(f.content).digest('hex') }));
  const main = files[0]!.rel;
  const digest = files.length === 1
    ? digestOf(files[0]!.content)
    : digestOf(`tranquil-snapshot-1\nmain ${main}\n${[...files].sort((a, b) => (a.rel < b.rel ? -1 : 1)).map((f) => `${f.sha256} ${f.rel}`).join('\n')}\n`);
  return { digest, root, main, files };
}

/** The version the file on disk has now (it and its local imports), without storing it. */
export function versionOf(file: string): string {
  return closureOf(resolve(file)).digest;
}

const specifier = (rel: string) => `./src/${rel.split('/').map(encodeURIComponent).join('/')}`;

/** Stores the file and its local imports, transitively (once per digest), and returns the
 *  snapshot: src/<path relative to the common root> for each file, manifest.json, and the
 *  generated entries that import the copy of the main file (never the live one). */
export function takeSnapshot(dataDir: string, file: string, now = Date.now()): Snapshot {
  const c = closureOf(resolve(file));
  const snap = paths(dataDir, c.digest);
  if (existsSync(snap.runEntry)) return snap;
  const tmp = `${snap.dir}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  rmSync(tmp, { recursive: true, force: true });
  for (const f of c.files) {
    const to = join(tmp, 'src', ...f.rel.split('/'));
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
    writeFileSync(to, f.content, { mode: 0o600 });
  }
  const manifest: Manifest = { source: resolve(file), main: c.main, root: c.root, files: c.files.map((f) => ({ path: f.rel, sha256: f.sha256 })), takenAt: now };
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  writeFileSync(join(tmp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  const module = specifier(c.main);
  const child = pathToFileURL(join(RUNNER, 'child.ts')).href;
  const describe = pathToFileURL(join(RUNNER, 'describe.ts')).href;
  writeFileSync(join(tmp, 'run.ts'), `// generated: runs ${basename(file)} (${c.digest})\nimport * as mod from '${module}';\nimport { runChild } from '${child}';\nawait runChild(mod, Number(Deno.args[0]), Number(Deno.args[1]));\n`, { mode: 0o600 });
  writeFileSync(join(tmp, 'describe.ts'), `// generated: describes ${basename(file)} (${c.digest})\nimport * as mod from '${module}';\nimport { describeModule } from '${describe}';\ndescribeModule(mod);\n`, { mode: 0o600 });
  try {
    renameSync(tmp, snap.dir);
  } catch (err) {
    // Another engine start wrote the same digest first: identical content.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(snap.runEntry)) throw err;
  }
  return snap;
}

/** The snapshot of a recorded version, if it is stored. */
export function findSnapshot(dataDir: string, digest: string): Snapshot | undefined {
  if (!/^[0-9a-f]{24}$/.test(digest)) return undefined;
  const snap = paths(dataDir, digest);
  return existsSync(snap.runEntry) ? snap : undefined;
}

/** A snapshot's manifest; undefined for one taken before manifests existed (file only). */
export function readManifest(dataDir: string, digest: string): Manifest | undefined {
  try {
    const m = manifestSchema().safeParse(JSON.parse(readFileSync(join(snapshotsDir(dataDir), digest, MANIFEST), 'utf8')));
    return m.success ? m.data : undefined;
  } catch {
    return undefined;
  }
}

/** Every stored snapshot: its digest and when it was first seen (taken). */
export function listSnapshots(dataDir: string): { digest: string; takenAt: number }[] {
  const dir = snapshotsDir(dataDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => /^[0-9a-f]{24}$/.test(d) && existsSync(join(dir, d, 'run.ts')))
    .map((digest) => ({ digest, takenAt: readManifest(dataDir, digest)?.takenAt ?? statSync(join(dir, digest)).mtimeMs }));
}

/** Removes the snapshots no stored run references (called by the retention of run data
 *  after it deleted runs; docs/runner.md, Snapshots). `keep` are the versions still
 *  referenced: every stored run's version (any status: a finished run may be retried) and
 *  each registered file's current version. A snapshot younger than `minAgeMs` is kept too:
 *  a trigger snapshots a version before it stores the run that references it. Returns the
 *  digests removed. */
export function removeUnreferencedSnapshots(dataDir: string, keep: ReadonlySet<string>, o: { now?: number; minAgeMs?: number } = {}): string[] {
  const now = o.now ?? Date.now();
  const minAge = o.minAgeMs ?? 10 * 60_000;
  const removed: string[] = [];
  for (const s of listSnapshots(dataDir)) {
    if (keep.has(s.digest) || now - s.takenAt < minAge) continue;
    rmSync(join(snapshotsDir(dataDir), s.digest), { recursive: true, force: true });
    removed.push(s.digest);
  }
  return removed;
}

/** The directory of the zod package children import (the engine's own). */
export function zodDir(): string {
  return dirname(createRequire(import.meta.url).resolve('zod/package.json'));
}

/** The directory of the devalue package children import (the value codec's encoding).
 *  (devalue's exports name no package.json: its entry is resolved, then its package dir.) */
export function devalueDir(): string {
  return dirname(dirname(createRequire(import.meta.url).resolve('devalue')));
}

/** The packages a child may load besides the engine's own modules (the import map's). */
export function childPackageDirs(): string[] {
  return [zodDir(), devalueDir()];
}

/** Writes <dataDir>/runner/import-map.json: the package names a workflow file imports. */
export function writeImportMap(dataDir: string): string {
  const zod = zodDir();
  // The value codec (src/domain/value-codec.ts) runs in the child too.
  const devalueEntry = devalueDir() + '/src/index.js';
  const map = {
    imports: {
      devalue: pathToFileURL(devalueEntry).href,
      '@tranquil/sdk': pathToFileURL(join(REPO, 'sdk', 'index.ts')).href,
      zod: pathToFileURL(join(zod, 'index.js')).href,
      'zod/': `${pathToFileURL(zod).href}/`,
    },
  };
  const file = join(dataDir, 'runner', 'import-map.json');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(map, null, 2)}\n`, { mode: 0o600 });
  return file;
}
