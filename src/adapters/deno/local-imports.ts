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
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { ValidationError } from '../../domain/errors.ts';

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
  for (const re of PATTERNS) for (const m of code.matchAll(re)) found.add(m[2]!);
  return [...found];
}

const isRelative = (s: string) => s.startsWith('./') || s.startsWith('../');
const isLocalAbsolute = (s: string) => s.startsWith('file:') || isAbsolute(s);

/** The file and its local imports, transitively; the main file first. */
export function localClosure(mainPath: string): ClosureFile[] {
  const main = resolve(mainPath);
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
      const target = resolve(dirname(path), decodeURIComponent(spec.replace(/[?#].*$/, '')));
      if (seen.has(target)) continue;
      seen.add(target);
      if (existsSync(target) && statSync(target).isFile()) queue.push(target);
    }
  }
  return files;
}
