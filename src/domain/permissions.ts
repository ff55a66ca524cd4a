// A workflow file's permission declaration and the Deno flags computed from it (issue 11).
// Pure: the same declaration always gives the same flags, and nothing but the declaration,
// the engine's loopback port and the runner's own token variable reaches them. Never
// --allow-all, never a bare --allow-<x> (which would mean "everything of that kind").
// The declaration's schema lives in permission-declaration.ts (no node: import there: the
// sdk loads it in Deno run children too); the flags below need node:path.
import { isAbsolute, join, normalize } from 'node:path';
import { permissionsSchema, type Permissions } from './permission-declaration.ts';
import { RUNNER_TOKEN_ENV } from './runner-token.ts';

export { permissionsSchema, RUNNER_TOKEN_ENV, type Permissions };

export interface DenoFlagInput {
  permissions: Permissions;
  /** The engine's step-protocol port on 127.0.0.1. */
  enginePort: number;
  /** Relative read/write paths are resolved against the workflow file's own directory. */
  baseDir: string;
  /** Import map that resolves @tranquil/sdk and zod for the child. */
  importMap: string;
}

const uniq = (xs: readonly string[]): string[] => [...new Set(xs)];
const resolvePath = (baseDir: string, p: string): string => normalize(isAbsolute(p) ? p : join(baseDir, p));

/** A declaration's read or write paths as the child's flags name them (absolute). */
export function grantedPaths(baseDir: string, paths: readonly string[] | undefined): string[] {
  return uniq((paths ?? []).map((x) => resolvePath(baseDir, x)));
}

/** The flags of `deno run` for one child, before the entry module. */
export function denoFlags(i: DenoFlagInput): string[] {
  if (!Number.isInteger(i.enginePort) || i.enginePort < 1 || i.enginePort > 65535) throw new RangeError(`engine port ${i.enginePort} is not a TCP port`);
  const p = i.permissions;
  const flags = ['--no-prompt', ...moduleFlags(i.importMap)];
  flags.push(`--allow-net=${uniq([`127.0.0.1:${i.enginePort}`, ...(p.net ?? [])]).join(',')}`);
  const read = grantedPaths(i.baseDir, p.read);
  if (read.length > 0) flags.push(`--allow-read=${read.join(',')}`);
  const write = grantedPaths(i.baseDir, p.write);
  if (write.length > 0) flags.push(`--allow-write=${write.join(',')}`);
  flags.push(`--allow-env=${uniq([RUNNER_TOKEN_ENV, ...(p.env ?? [])]).join(',')}`);
  return flags;
}

/** The flags of the child that only describes a file: no permission at all. */
export function describeFlags(importMap: string): string[] {
  return ['--no-prompt', ...moduleFlags(importMap)];
}

/** How every child (and `deno info`, which checks its module graph) loads modules: no
 *  config file, nothing remote, no npm: package (issue 36: no download, no channel out
 *  through a package name), @tranquil/sdk and zod through the import map. */
export function moduleFlags(importMap: string): string[] {
  return ['--no-config', '--no-remote', '--no-npm', `--import-map=${importMap}`];
}
