// The engine package's root directory, found from this module's own location: the sources sit
// three levels below it (src/adapters/deno/), the build one or two (dist/, dist/chunks/). The
// Deno children load runner/*.ts and sdk/*.ts from there, in a checkout and an install alike.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === '@tranquil/engine') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`@tranquil/engine: no package.json of the engine above ${fileURLToPath(from)}`);
    dir = up;
  }
}
