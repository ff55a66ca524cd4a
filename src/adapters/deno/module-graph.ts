// The module graph of a snapshot, checked with Deno's own resolver before a file is described
// (approval) and before its first run in this process (issue 36). Deno does not permission-
// check a module load whose specifier it can see statically (nor a dynamic one it can see,
// escapes like '\u002f' included), so a workflow file could import the operator's SSH key as
// `type: 'text'`. `deno info --json` resolves exactly what `deno run` would (same DENO_DIR,
// import map and flags); every module a snapshot module depends on must be a file inside the
// snapshot or one of the engine's own modules (the sdk, the runner, zod). Not refusable here:
// a specifier computed at run time (`import(x)`); Deno checks its read permission (and
// --no-npm/--no-remote refuse npm:, jsr: and remote ones).
import { execFile } from 'node:child_process';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { ValidationError } from '../../domain/errors.ts';
import { packageRoot } from './package-root.ts';
import { pathOfFileUrl } from './file-url.ts';
import { withPrivateUmask } from './child-process.ts';

const INFO_TIMEOUT_MS = 60_000;

const dep = z.object({
  specifier: z.string(),
  code: z.object({ specifier: z.string().optional(), error: z.string().optional() }).passthrough().optional(),
  type: z.object({ specifier: z.string().optional(), error: z.string().optional() }).passthrough().optional(),
}).passthrough();
const infoSchema = z.object({
  modules: z.array(z.object({ specifier: z.string(), local: z.string().optional(), dependencies: z.array(dep).optional() }).passthrough()),
}).passthrough();
type Info = z.infer<typeof infoSchema>;

export interface GraphContext {
  binary: string;
  /** The flags every child gets for module loading (--no-config, --no-remote, --no-npm, the import map). */
  flags: readonly string[];
  env: Record<string, string>;
  /** Directories of the engine's own modules a workflow file may import (zod's package). */
  trustedDirs: readonly string[];
  /** Aborted when the runner closes: a `deno info` in flight is killed (it writes DENO_DIR). */
  signal?: AbortSignal;
}

function denoInfo(ctx: GraphContext, entries: readonly string[], cwd: string): Promise<Info> {
  // Entries go as file URLs: given a path, Deno leaves a '%' that starts no escape unencoded in
  // the specifiers it reports (file:///data/%/x.ts), which no URL parser turns back into a path.
  const urls = entries.map((e) => pathToFileURL(e).href);
  return new Promise((resolve, reject) => {
    withPrivateUmask(() => execFile(ctx.binary, ['info', '--json', ...ctx.flags, ...urls], { env: ctx.env, cwd, timeout: INFO_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, killSignal: 'SIGKILL', ...(ctx.signal ? { signal: ctx.signal } : {}) }, (err, stdout, stderr) => {
      if (err) return reject(new ValidationError(`deno info ${entries.join(' ')} failed: ${(stderr || err.message).trim().split('\n').pop()}`));
      try {
        resolve(infoSchema.parse(JSON.parse(stdout)));
      } catch (e) {
        reject(new ValidationError(`deno info ${entries.join(' ')}: unreadable output: ${(e as Error).message.split('\n')[0]}`));
      }
    }));
  });
}

const engineSets = new Map<string, Promise<ReadonlySet<string>>>();

/** The files of the engine's own module graph (runner entries and the sdk): trusted. */
function engineModules(ctx: GraphContext): Promise<ReadonlySet<string>> {
  const key = `${ctx.binary}\0${ctx.flags.join('\0')}`;
  let set = engineSets.get(key);
  if (!set) {
    const root = packageRoot();
    set = denoInfo(ctx, [join(root, 'runner', 'child.ts')], root).then(async (a) => {
      const b = await denoInfo(ctx, [join(root, 'runner', 'describe.ts')], root);
      const c = await denoInfo(ctx, [join(root, 'sdk', 'index.ts')], root);
      return new Set([...a.modules, ...b.modules, ...c.modules].map((m) => m.local).filter((p): p is string => p !== undefined));
    });
    set.catch(() => engineSets.delete(key));
    engineSets.set(key, set);
  }
  return set;
}

const inside = (dir: string, path: string) => path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** Refuses (ValidationError, one line naming the importer and the target) a snapshot whose
 *  modules load anything outside the snapshot and the engine's own modules. */
export async function checkModuleGraph(ctx: GraphContext, snapDir: string, entry: string, what: string): Promise<void> {
  const [info, engine] = await Promise.all([denoInfo(ctx, [entry], snapDir), engineModules(ctx)]);
  const userSrc = join(snapDir, 'src');
  const shown = (local: string) => (inside(userSrc, local) ? local.slice(userSrc.length + 1) : local);
  for (const m of info.modules) {
    if (m.local === undefined || !inside(snapDir, m.local)) continue; // engine modules are trusted
    for (const d of m.dependencies ?? []) {
      for (const target of [d.code?.specifier, d.type?.specifier]) {
        if (target === undefined) continue; // unresolvable (a bare name): the child reports it
        const why = refusal(target, snapDir, engine, ctx.trustedDirs);
        if (why) throw new ValidationError(`${what}: ${shown(m.local)} imports '${d.specifier}', ${why}; a workflow file may import only files in its own directory, @tranquil/sdk and zod (docs/runner.md, Threat model)`);
      }
    }
  }
}

function refusal(target: string, snapDir: string, engine: ReadonlySet<string>, trusted: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `which is not a URL (${target})`;
  }
  if (url.protocol !== 'file:') return `a ${url.protocol} specifier (not granted: only local modules are loaded)`;
  const path = pathOfFileUrl(url); // decoded as Deno decodes it ('%' starting no escape kept)
  if (path === undefined) return `which names no local UTF-8 file path (${target})`;
  if (inside(snapDir, path) || engine.has(path) || trusted.some((d) => inside(d, path))) return undefined;
  return `which resolves to ${path}, outside the workflow's snapshot`;
}
