// Grants that say what they mean (issue 36 #8): a read or write grant that covers the engine's
// own files (the data dir with the journal, snapshots and serve.json's control token, the
// payload key file, the config file), or lies inside them, is refused when the file is
// described, naming the grant as written and as resolved (symlinks followed): `read: ['.']`
// in a project whose data dir is ./.tranquil reads the control token.
import { realpathSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { ValidationError } from '../../domain/errors.ts';
import type { Permissions } from '../../domain/permissions.ts';
import type { GrantPaths } from '../../domain/approval.ts';

/** `path` is `dir` or inside it. */
const within = (dir: string, path: string) => {
  const r = relative(dir, path);
  return r === '' || (r.split(sep)[0] !== '..' && !isAbsolute(r));
};

/** The path with every symlink followed, as far as it exists (a missing tail kept as written). */
export function resolved(path: string): string {
  const parts = normalize(path).split(sep);
  for (let i = parts.length; i > 0; i--) {
    const head = parts.slice(0, i).join(sep) || sep;
    try {
      return join(realpathSync(head), ...parts.slice(i));
    } catch {
      // shorter
    }
  }
  return path;
}

export interface Protected {
  what: string;
  path: string;
}

/** Refuses a declaration whose read/write grants touch a protected path. */
export function checkGrants(file: string, p: Permissions, baseDir: string, guarded: readonly Protected[]): void {
  for (const kind of ['read', 'write'] as const) {
    for (const written of p[kind] ?? []) {
      const abs = normalize(isAbsolute(written) ? written : join(baseDir, written));
      const real = resolved(abs);
      for (const g of guarded) {
        const target = resolved(g.path);
        if (!within(real, target) && !within(target, real)) continue;
        const shown = grantTarget(written, baseDir);
        throw new ValidationError(`workflow file ${file}: its ${kind} grant '${written}' (${shown}) ${within(real, target) ? 'covers' : 'is inside'} ${g.what} ${target}; a workflow file is never granted the engine's own files (docs/runner.md, Threat model)`);
      }
    }
  }
}

/** A path grant's absolute path, and where it leads when a symlink is on the way:
 *  `/srv/app/symdata -> /home/x/secrets`. */
export function grantTarget(written: string, baseDir: string): string {
  const abs = normalize(isAbsolute(written) ? written : join(baseDir, written));
  const real = resolved(abs);
  return real === abs ? abs : `${abs} -> ${real}`;
}

/** `read:<entry>` / `write:<entry>` of the declarations, each with its grantTarget. */
export function grantPaths(baseDir: string, declarations: readonly (Permissions | undefined)[]): GrantPaths {
  const out: Record<string, string> = {};
  for (const p of declarations) for (const kind of ['read', 'write'] as const) for (const e of p?.[kind] ?? []) out[`${kind}:${e}`] = grantTarget(e, baseDir);
  return out;
}
