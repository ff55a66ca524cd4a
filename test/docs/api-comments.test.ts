// Every public export has a doc comment: the API reference (`npm run docs:api`, TypeDoc) is
// built from them, so an export without one is a hole in the reference. The entry points are
// package.json "exports" (test/docs/api-comments.ts); a planted program with an uncommented
// export (declared, re-exported and `export *`-ed) must fail naming it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryPoints, exportReport } from './api-comments.ts';

describe('API doc comments', () => {
  it('every export of every public entry point has a doc comment', () => {
    const entries = entryPoints();
    expect(entries.map((e) => e.subpath)).toEqual(['.', './testing', './sdk']);
    const r = exportReport(entries);
    console.log(`api comments: ${r.all.length} public exports in ${entries.length} entry points, ${r.missing.length} without a doc comment`);
    // A walker that finds nothing must fail: the three entry points export ~100 names.
    expect(r.all.length).toBeGreaterThan(80);
    for (const name of ['.: createEngine', '.: Engine', './testing: createTestEngine', './sdk: workflow', './sdk: StepApi']) expect(r.all).toContain(name);
    expect(r.missing).toEqual([]);
  }, 180_000); // one program over the entry points: 67 s measured at load 20 on 2 cores

  it('a planted uncommented export fails, named with its file and line', () => {
    const root = mkdtempSync(join(tmpdir(), 'tranquil-apicomments-'));
    try {
      mkdirSync(join(root, 'src'));
      writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'ESNext', moduleResolution: 'Bundler', allowImportingTsExtensions: true, noEmit: true, types: [] } }));
      writeFileSync(join(root, 'package.json'), JSON.stringify({ exports: { '.': { 'tranquil-source': './src/index.ts' }, './extra': { 'tranquil-source': './src/extra.ts' }, './package.json': './package.json' } }));
      writeFileSync(join(root, 'src', 'index.ts'), [
        '/** Documented. */',
        'export function good(): number { return 1; }',
        'export const bare = 2;',
        '/** A documented constant. */',
        'export const fine = 3;',
        "export { Hidden, Shown } from './types.ts';",
        "export * from './star.ts';",
      ].join('\n'));
      writeFileSync(join(root, 'src', 'types.ts'), 'export interface Hidden { x: number }\n/** Shown. */\nexport type Shown = string;\n');
      writeFileSync(join(root, 'src', 'star.ts'), '// a line comment is not a doc comment\nexport class Starred {}\n/** */\nexport type EmptyDoc = number;\n');
      writeFileSync(join(root, 'src', 'extra.ts'), 'export function other(): void {}\n');
      const r = exportReport(entryPoints(root), root);
      expect(r.all).toEqual(['./extra: other', '.: EmptyDoc', '.: Hidden', '.: Shown', '.: Starred', '.: bare', '.: fine', '.: good'].sort());
      expect(r.missing).toEqual([
        './extra: other (src/extra.ts:1)',
        '.: EmptyDoc (src/star.ts:4)',
        '.: Hidden (src/types.ts:1)',
        '.: Starred (src/star.ts:2)',
        '.: bare (src/index.ts:3)',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
