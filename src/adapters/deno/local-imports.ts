// The local module closure of a workflow file: the file and every module it imports by a
// relative specifier ('./lib.ts', '../shared/x.ts'), transitively, read once each (the bytes
// read are the bytes hashed and stored: no window between reading and snapshotting). Found
// by scanning the source text, not by importing or executing it (the engine never runs a
// workflow file's code). Bare, npm:, jsr: and https: specifiers are not followed (the child
// resolves @tranquil/sdk and zod through the import map; --no-remote refuses the rest); an
// absolute or file: specifier is refused, since the snapshot would then execute a live file.
//
// The scan is tolerant by design: a specifier-looking string inside a string literal is
// followed too (copying an extra file is harmless) and one that names no file is skipped (if
// the module really imports it, the child fails with Deno's "Module not found", naming it).
// Not followed: specifiers computed at run time (`import(name)`).
//
// Only the workflow file's own directory is snapshotted (issue 36): a relative import that
// leaves it, or a symlink in it that points out of it, is refused with the path it tried,
// never read (a hostile file imported '../secret/id_rsa' as text and the engine copied the
// key into the snapshot). JS escapes in a specifier ('\u002f') are decoded before the check.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { ValidationError } from '../../domain/errors.ts';
import { decodeLenient } from './file-url.ts';

/** Files whose text is scanned for imports; others (JSON, text) are copied as they are. */
const CODE = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);

export interface ClosureFile {
  /** Absolute path. */
  path: string;
  content: Buffer;
}

/** Removes comments so that an import in a comment is not followed; keeps string literals. */
export function stripComments(src: string): string {
  let out = '';
  let i = 0;
  let quote: string | undefined;
  while (i < src.length) {
    const c = src[i]!;
    if (quote) {
      out += c;
      if (c === '\\') out += src[++i] ?? '';
      else if (c === quote) quote = undefined;
      i++;
    } else if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? src.length : end + 2;
      out += ' ';
    } else {
      if (c === '"' || c === "'" || c === '`') quote = c;
      out += c;
      i++;
    }
  }
  return out;
}

const PATTERNS = [
  /\bfrom\s*(['"])([^'"\n]+)\1/g, // import x from '…', export { x } from '…'
  /\bimport\s*(['"])([^'"\n]+)\1/g, // import '…'
  /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*[,)]/g, // import('…')
];

/** The module specifiers a source text names (all kinds; the caller picks the local ones). */
export function specifiersIn(src: string): string[] {
  const code = stripComments(src);
  const found = new Set<string>();
  for (const re of PATTERNS) for (const m of code.matchAll(re)) found.add(unescapeJs(m[2]!));
  return [...found];
}

/** A string literal's escapes as the JS parser reads them ('\u002f' is '/'). */
function unescapeJs(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(?:u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([\s\S]))/g, (_, cp?: string, u?: string, x?: string, c?: string) => {
    const hex = cp ?? u ?? x;
    if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
    return ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', 0: '\0' } as Record<string, string>)[c!] ?? c!;
  });
}

/** `path` is `dir` or inside it. */
const within = (dir: string, path: string) => {
  const r = relative(dir, path);
  return r === '' || (r.split(sep)[0] !== '..' && !isAbsolute(r));
};

const isRelative = (s: string) => s.startsWith('./') || s.startsWith('../');
const isLocalAbsolute = (s: string) => s.startsWith('file:') || isAbsolute(s);

/** The file and its local imports, transitively; the main file first. */
export function localClosure(mainPath: string): ClosureFile[] {
  const main = resolve(mainPath);
  const home = dirname(main);
  let realHome: string;
  try {
    realHome = realpathSync(home);
  } catch {
    realHome = home;
  }
  const files: ClosureFile[] = [];
  const seen = new Set<string>([main]);
  const queue = [main];
  while (queue.length > 0) {
    const path = queue.shift()!;
    let content: Buffer;
    try {
      content = readFileSync(path);
    } catch (err) {
      if (path === main) throw err;
      continue; // named in a string, or really missing: the child reports a missing module
    }
    files.push({ path, content });
    if (!CODE.has(extname(path))) continue;
    for (const spec of specifiersIn(content.toString('utf8'))) {
      if (isLocalAbsolute(spec)) {
        throw new ValidationError(`workflow file ${main}: ${path} imports '${spec}' by absolute path; only relative imports ('./x.ts') are snapshotted with the file (docs/runner.md, Snapshots)`);
      }
      if (!isRelative(spec)) continue;
      const target = resolve(dirname(path), decodeLenient(spec.replace(/[?#].*$/, '')) ?? spec);
      if (seen.has(target)) continue;
      seen.add(target);
      if (!within(home, target)) {
        throw new ValidationError(`workflow file ${main}: ${path} imports '${spec}', which resolves to ${target}, outside the workflow's directory ${home}; only files in its own directory are snapshotted (docs/runner.md, Snapshots)`);
      }
      if (!existsSync(target)) continue;
      const real = realpathSync(target);
      if (!within(realHome, real)) {
        throw new ValidationError(`workflow file ${main}: ${path} imports '${spec}', a symlink to ${real}, outside the workflow's directory ${home}; it is not followed (docs/runner.md, Snapshots)`);
      }
      if (statSync(target).isFile()) queue.push(target);
    }
  }
  return files;
}

