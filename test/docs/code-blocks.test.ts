// Docs whose code is tested: every ```ts block in README.md and docs/**/*.md type-checks
// against the public API (test/docs/check-blocks.ts), except the few marked
// `<!-- fragment -->`; a block planted broken must fail.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBlocks, type BlockCheck } from './check-blocks.ts';
import { docFiles } from './markdown.ts';

// A planted set of pages, checked in the same program as the real ones (one compile).
const root = mkdtempSync(join(tmpdir(), 'tranquil-docblocks-'));
mkdirSync(join(root, 'docs'));
writeFileSync(join(root, 'README.md'), [
  '# T', '', '```ts', "import { createEngine } from '@tranquil/engine';", "const e = await createEngine({ dataDir: '.t' });", 'await e.start();', '```', '',
  '<!-- fragment -->', '```ts', 'createEngine({ backend: "sqlite", ... })', '```', '',
  '<!-- given: declare function load(id: string): Promise<number>; -->', '```ts', "const n: number = await load('x');", '```', '',
].join('\n'));
writeFileSync(join(root, 'docs', 'a.md'), ['# A', '', '```ts', "await engine.runs.retry(runId, { from: 'x' });", "const s: string = await engine.trigger('wf');", '```', ''].join('\n'));

let docs: BlockCheck;
let planted: BlockCheck;
beforeAll(() => {
  [docs, planted] = checkBlocks([{ files: docFiles() }, { files: docFiles(root), root, label: 'planted:' }]) as [BlockCheck, BlockCheck];
}, 180_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('docs code blocks', () => {
  it('every non-fragment ts block in README.md and docs/ type-checks against the public API', () => {
    const r = docs;
    console.log(`docs code: ${r.checked.length} ts blocks type-checked, ${r.fragments.length} fragments exempt (${r.fragments.map((b) => `${b.file}:${b.line}`).join(', ')})`);
    expect(r.errors).toEqual([]);
    expect(r.checked.length).toBeGreaterThan(20);
    // Fragments are the exception: at most one in five blocks.
    expect(r.fragments.length).toBeLessThanOrEqual(Math.ceil((r.checked.length + r.fragments.length) / 5));
  }, 120_000);

  it('a planted broken block fails at its Markdown line; a fragment and a given comment are honoured', () => {
    expect(planted.checked.map((b) => `${b.file}:${b.line}`)).toEqual(['planted:README.md:3', 'planted:README.md:15', 'planted:docs/a.md:3']);
    expect(planted.fragments.map((b) => `${b.file}:${b.line}`)).toEqual(['planted:README.md:10']);
    expect(planted.errors).toHaveLength(1);
    expect(planted.errors[0]).toMatch(/^planted:docs\/a\.md:5: TS2322 Type '\{ runId: string; created: boolean; \}' is not assignable to type 'string'/);
  });
});
