// Where the deno binary is: a configured path, else the real binary the locked npm package
// installed (@deno/<platform>), spawned by absolute path. Never node_modules/.bin/deno's
// bin.cjs fallback (+~50 ms per spawn through Node) and never a download at run time.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { NotSupportedError } from '../../domain/errors.ts';

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@deno/linux-x64-glibc',
  'linux-arm64': '@deno/linux-arm64-glibc',
  'darwin-x64': '@deno/darwin-x64',
  'darwin-arm64': '@deno/darwin-arm64',
};

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path of the deno binary to spawn. */
export function findDeno(override?: string): string {
  if (override !== undefined) {
    const abs = isAbsolute(override) ? override : resolve(override);
    if (!executable(abs)) throw new NotSupportedError(`config deno.binary: ${abs} is not an executable file`);
    return abs;
  }
  const pkg = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (!pkg) throw new NotSupportedError(`no deno binary for ${process.platform}-${process.arch}: set config deno.binary`);
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    // Resolved from the deno package, which depends on its platform package.
    dir = dirname(createRequire(require.resolve('deno/package.json')).resolve(`${pkg}/package.json`));
  } catch {
    throw new NotSupportedError(`the deno binary package ${pkg} is not installed (npm ci installs it from the lock file)`);
  }
  const bin = join(dir, 'deno');
  if (!executable(bin)) throw new NotSupportedError(`${bin} is not executable`);
  return bin;
}
