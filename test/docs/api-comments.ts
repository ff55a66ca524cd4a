// Which exports of the package's public entry points have no doc comment. The entry points
// are package.json "exports" (their `tranquil-source` condition: the TypeScript source the
// types are built from); every name each one exports, re-exports followed to the declaration,
// must carry a /** ... */ comment, since the API reference (npm run docs:api) is built from them.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { REPO } from './markdown.ts';

export interface EntryPoint {
  /** The subpath as package.json names it: '.', './testing', './sdk'. */
  subpath: string;
  file: string;
}

/** The package's public entry points, from package.json "exports" (not ./package.json). */
export function entryPoints(root = REPO): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    const source = typeof target === 'object' ? target['tranquil-source'] : undefined;
    return source ? [{ subpath, file: join(root, source) }] : [];
  });
}

export interface ExportReport {
  /** `subpath: Name` of every export, sorted. */
  all: string[];
  /** `subpath: Name (file:line)` of every export whose declarations carry no doc comment. */
  missing: string[];
}

function options(root: string): ts.CompilerOptions {
  const file = join(root, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(file, ts.sys.readFile).config, ts.sys, dirname(file));
  return { ...parsed.options, noEmit: true };
}

const hasDoc = (decl: ts.Declaration): boolean => {
  // A variable's comment sits on its statement (`/** ... */ export const x = ...`).
  const node = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl;
  return ts.getJSDocCommentsAndTags(node).some((d) => ts.isJSDoc(d) && (typeof d.comment === 'string' ? d.comment.trim() !== '' : (d.comment?.length ?? 0) > 0));
};

/** Lists every export of each entry point and those without a doc comment (one program). */
export function exportReport(entries: EntryPoint[], root = REPO): ExportReport {
  const program = ts.createProgram(entries.map((e) => e.file), options(root));
  const checker = program.getTypeChecker();
  const all: string[] = [];
  const missing: string[] = [];
  for (const entry of entries) {
    const sf = program.getSourceFile(entry.file);
    if (!sf) throw new Error(`${entry.subpath}: ${entry.file} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) throw new Error(`${entry.subpath}: ${entry.file} is not a module`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const decls = symbol.declarations ?? [];
      const name = `${entry.subpath}: ${exported.name}`;
      all.push(name);
      if (decls.some(hasDoc)) continue;
      const at = decls[0];
      const where = at ? ` (${at.getSourceFile().fileName.slice(root.length).replace(/^\//, '')}:${at.getSourceFile().getLineAndCharacterOfPosition(at.getStart()).line + 1})` : '';
      missing.push(`${name}${where}`);
    }
  }
  return { all: all.sort(), missing: missing.sort() };
}
