// Where better-sqlite3's native addon is, given to it by path (its `nativeBinding` option).
//
// Without it, better-sqlite3 finds its addon through the `bindings` package, which tries a
// dozen candidate paths. That and loading the driver's own CommonJS files cost node ~150 path
// resolutions at start, enough to make node's path functions "hot": V8 then starts its
// optimizing compiler, and its code (~3 MiB of node's binary) becomes resident in a host that
// might never have needed it. The build bundles the driver's JavaScript and opens the addon
// here (docs/performance.md, "Idle memory"); from the sources it is the installed package either way.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let found: string | null | undefined;

/** The installed build of the addon, or undefined (built elsewhere, e.g. a debug build):
 *  better-sqlite3 then looks for it itself, as it always did. */
export function nativeAddonPath(): string | undefined {
  if (found === undefined) {
    try {
      const pkg = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
      const addon = join(dirname(pkg), 'build', 'Release', 'better_sqlite3.node');
      found = existsSync(addon) ? addon : null;
    } catch {
      found = null;
    }
  }
  return found ?? undefined;
}
