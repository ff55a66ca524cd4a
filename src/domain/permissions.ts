// A workflow file's permission declaration and the Deno flags computed from it (issue 11).
// Pure: the same declaration always gives the same flags, and nothing but the declaration,
// the engine's loopback port and the runner's own token variable reaches them. Never
// --allow-all, never a bare --allow-<x> (which would mean "everything of that kind").
import { isAbsolute, join, normalize } from 'node:path';
import { z } from 'zod';

/** Deno joins a flag's values with commas: an entry holding one would widen the grant. */
const entry = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(1024)
    .refine((s) => !s.includes(','), `${what} must not contain ','`)
    .refine((s) => !/[\0\n\r]/.test(s), `${what} must not contain control characters`);

/** host, host:port, [ipv6]:port; no scheme, no path, no wildcard. */
const netHost = entry('a net host').refine((s) => /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(s), 'a net host is host or host:port (no scheme, no path, no wildcard)');
const envName = entry('an env name').refine((s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s), 'an env name is letters, digits and _ (no wildcard)');

export const permissionsSchema = z
  .object({
    net: z.array(netHost).max(256).optional(),
    read: z.array(entry('a read path')).max(256).optional(),
    write: z.array(entry('a write path')).max(256).optional(),
    env: z.array(envName).max(256).optional(),
  })
  .strict();

export type Permissions = z.infer<typeof permissionsSchema>;

/** The env var the runner's single-use token travels in (never argv, never a URL). */
export const RUNNER_TOKEN_ENV = 'TRANQUIL_RUNNER_TOKEN';

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

/** The flags of `deno run` for one child, before the entry module. */
export function denoFlags(i: DenoFlagInput): string[] {
  if (!Number.isInteger(i.enginePort) || i.enginePort < 1 || i.enginePort > 65535) throw new RangeError(`engine port ${i.enginePort} is not a TCP port`);
  const p = i.permissions;
  const flags = ['--no-prompt', '--no-config', '--no-remote', `--import-map=${i.importMap}`];
  flags.push(`--allow-net=${uniq([`127.0.0.1:${i.enginePort}`, ...(p.net ?? [])]).join(',')}`);
  const read = uniq((p.read ?? []).map((x) => resolvePath(i.baseDir, x)));
  if (read.length > 0) flags.push(`--allow-read=${read.join(',')}`);
  const write = uniq((p.write ?? []).map((x) => resolvePath(i.baseDir, x)));
  if (write.length > 0) flags.push(`--allow-write=${write.join(',')}`);
  flags.push(`--allow-env=${uniq([RUNNER_TOKEN_ENV, ...(p.env ?? [])]).join(',')}`);
  return flags;
}

/** The flags of the child that only describes a file: no permission at all. */
export function describeFlags(importMap: string): string[] {
  return ['--no-prompt', '--no-config', '--no-remote', `--import-map=${importMap}`];
}
