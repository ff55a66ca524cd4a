// Content-addressed snapshots of workflow files under <dataDir>/runner/snapshots/<digest>/:
// the file as it was, plus the generated entries that statically import it (a static import
// needs no read permission, so the child is granted nothing for its own code). A run executes
// the snapshot of its recorded version, never the live file. Also the shared import map that
// resolves @tranquil/sdk and zod for children.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from './package-root.ts';

const REPO = packageRoot(); // also right from the build (dist/chunks/*.js)
const RUNNER = join(REPO, 'runner');

export interface Snapshot {
  digest: string;
  dir: string;
  /** Entry that runs the workflow: `deno run <flags> run.ts <port> <maxPayloadBytes>`. */
  runEntry: string;
  /** Entry that prints the description. */
  describeEntry: string;
}

export function digestOf(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

export function snapshotsDir(dataDir: string): string {
  return join(dataDir, 'runner', 'snapshots');
}

function paths(dataDir: string, digest: string): Snapshot {
  const dir = join(snapshotsDir(dataDir), digest);
  return { digest, dir, runEntry: join(dir, 'run.ts'), describeEntry: join(dir, 'describe.ts') };
}

/** Stores the file's current content (once per digest) and returns its snapshot. Only the
 *  file itself is copied: its local imports are not followed yet (docs/runner.md). */
export function takeSnapshot(dataDir: string, file: string): Snapshot {
  const text = readFileSync(file);
  const digest = digestOf(text);
  const snap = paths(dataDir, digest);
  if (existsSync(snap.runEntry)) return snap;
  const ext = extname(file) || '.ts';
  const module = `./workflow${ext}`;
  const tmp = `${snap.dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, `workflow${ext}`), text);
  writeFileSync(join(tmp, 'source.txt'), `${file}\n`);
  const child = pathToFileURL(join(RUNNER, 'child.ts')).href;
  const describe = pathToFileURL(join(RUNNER, 'describe.ts')).href;
  writeFileSync(join(tmp, 'run.ts'), `// generated: runs ${basename(file)} (${digest})\nimport * as mod from '${module}';\nimport { runChild } from '${child}';\nawait runChild(mod, Number(Deno.args[0]), Number(Deno.args[1]));\n`);
  writeFileSync(join(tmp, 'describe.ts'), `// generated: describes ${basename(file)} (${digest})\nimport * as mod from '${module}';\nimport { describeModule } from '${describe}';\ndescribeModule(mod);\n`);
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
  const snap = paths(dataDir, digest);
  return existsSync(snap.runEntry) ? snap : undefined;
}

/** Writes <dataDir>/runner/import-map.json: the package names a workflow file imports. */
export function writeImportMap(dataDir: string): string {
  const require = createRequire(import.meta.url);
  const zodDir = dirname(require.resolve('zod/package.json'));
  const map = {
    imports: {
      '@tranquil/sdk': pathToFileURL(join(REPO, 'sdk', 'index.ts')).href,
      zod: pathToFileURL(join(zodDir, 'index.js')).href,
      'zod/': `${pathToFileURL(zodDir).href}/`,
    },
  };
  const file = join(dataDir, 'runner', 'import-map.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(map, null, 2)}\n`);
  return file;
}
