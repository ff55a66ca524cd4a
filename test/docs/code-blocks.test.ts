// Docs whose code is tested: every ```ts block in README.md and docs/**/*.md type-checks
// against the public API (test/docs/check-blocks.ts), except the few marked
// `<!-- fragment -->`; a block planted broken must fail. Blocks whose fence says
// ```ts runnable also run, against the test engine (test/docs/run-blocks.ts), and must finish
// without throwing; a planted failing one must fail at its line.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBlocks, type BlockCheck } from './check-blocks.ts';
import { docFiles, readMarkdown, REPO, type CodeBlock } from './markdown.ts';
import { exampleBlocks, examplesIn } from './examples.ts';
import { runBlocks } from './run-blocks.ts';

// A planted set of pages, checked in the same program as the real ones (one compile).
const root = mkdtempSync(join(tmpdir(), 'tranquil-docblocks-'));
mkdirSync(join(root, 'docs'));
writeFileSync(join(root, 'README.md'), [
  '# T', '', '```ts', "import { createEngine } from '@tranquil/engine';", "const e = await createEngine({ dataDir: '.t' });", 'await e.start();', '```', '',
  '<!-- fragment -->', '```ts', 'createEngine({ backend: "sqlite", ... })', '```', '',
  '<!-- given: declare function load(id: string): Promise<number>; -->', '```ts', "const n: number = await load('x');", '```', '',
].join('\n'));
writeFileSync(join(root, 'docs', 'run.md'), [
  '# R', '', '```ts runnable',
  "import { createEngine } from '@tranquil/engine';",
  "import { workflow } from '@tranquil/sdk';",
  "const hello = workflow('hello', (w) => w.run(async ({ step }) => step.do('greet', () => 'hi')));",
  "const engine = await createEngine({ dataDir: '.planted-data', workflows: [hello] });",
  'await engine.start();',
  'const { runId } = await engine.trigger(hello, null);',
  "if ((await engine.result(runId)).output !== 'hi') throw new Error('wrong output');",
  '```', '', '```ts runnable',
  "const wf = workflow('uses-globals', (w) => w.run(() => 1)); // the prelude's functions are globals",
  "if (wf.name !== 'uses-globals') throw new Error('no name');",
  "throw new TerminalError('planted failure');",
  '```', '', '```ts', "throw new Error('not runnable: never run');", '```', '',
].join('\n'));
writeFileSync(join(root, 'docs', 'a.md'), ['# A', '', '```ts', "await engine.runs.retry(runId, { from: 'x' });", "const s: string = await engine.trigger('wf');", '```', ''].join('\n'));

let docs: BlockCheck;
let planted: BlockCheck;
let examples: BlockCheck;
let plantedExample: BlockCheck;
const plantedSource = ['/**', ' * Does x.', ' * @example', ' * ```ts', " * const n: number = 'no';", ' * ```', ' * @throws never', ' * ```ts', ' * not an example', ' * ```', ' */', 'export const x = 1;'].join('\n');
beforeAll(() => {
  [docs, planted, examples, plantedExample] = checkBlocks([
    { files: docFiles() },
    { files: docFiles(root), root, label: 'planted:' },
    { files: [], blocks: exampleBlocks(), label: 'example:' },
    { files: [], blocks: examplesIn('x.ts', plantedSource), label: 'p:' },
  ]) as [BlockCheck, BlockCheck, BlockCheck, BlockCheck];
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

  it('every @example ```ts block of the sources\' doc comments (the API reference\'s) type-checks', () => {
    console.log(`docs code: ${examples.checked.length} @example blocks type-checked (${examples.checked.map((b) => `${b.file}:${b.line}`).join(', ')})`);
    expect(examples.errors).toEqual([]);
    expect(examples.checked.map((b) => b.file)).toEqual(expect.arrayContaining(['example:sdk/workflow.ts', 'example:compose/testing.ts', 'example:src/runtime/engine.ts']));
  });

  it('a planted broken @example block fails at its source line; the next tag ends the example', () => {
    expect(plantedExample.checked.map((b) => `${b.file}:${b.line}`)).toEqual(['p:x.ts:4']);
    expect(plantedExample.errors).toEqual([expect.stringMatching(/^p:x\.ts:5: TS2322 /)]);
  });

  it('a planted broken block fails at its Markdown line; a fragment and a given comment are honoured', () => {
    expect(planted.checked.map((b) => `${b.file}:${b.line}`)).toEqual(['planted:README.md:3', 'planted:README.md:15', 'planted:docs/a.md:3', 'planted:docs/run.md:3', 'planted:docs/run.md:13', 'planted:docs/run.md:19']);
    expect(planted.fragments.map((b) => `${b.file}:${b.line}`)).toEqual(['planted:README.md:10']);
    expect(planted.errors).toHaveLength(1);
    expect(planted.errors[0]).toMatch(/^planted:docs\/a\.md:5: TS2322 Type '\{ runId: string; created: boolean; debouncedUntil\?: string \| undefined; \}' is not assignable to type 'string'/);
  });
});

const runnable = (r: string): CodeBlock[] => docFiles(r).flatMap((f) => readMarkdown(f, r).blocks).filter((b) => b.runnable);

describe('runnable docs code blocks', () => {
  it('every ```ts runnable block of README.md and docs/ runs against the test engine without throwing', async () => {
    const blocks = runnable(REPO);
    const started = Date.now();
    const r = await runBlocks(blocks);
    console.log(`docs code: ${r.ran.length} runnable blocks ran in ${Date.now() - started} ms (${r.ran.map((b) => `${b.file}:${b.line}`).join(', ')})`);
    expect(r.errors).toEqual([]);
    // The README's quick start and a few self-contained pages at least.
    expect(blocks.map((b) => b.file)).toContain('README.md');
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    // A runnable block is type-checked too: it cannot be a fragment, and it is a ts block.
    expect(blocks.filter((b) => b.fragment || b.lang !== 'ts').map((b) => `${b.file}:${b.line}`)).toEqual([]);
  }, 180_000); // 85 s measured at load 20 on 2 cores, most of it importing the engine's sources (13 s of 15 s at load 11)

  it('a planted runnable block that throws fails at its Markdown line; an unmarked block is not run', async () => {
    const blocks = runnable(root);
    expect(blocks.map((b) => `${b.file}:${b.line}`)).toEqual(['docs/run.md:3', 'docs/run.md:13']);
    const r = await runBlocks(blocks);
    expect(r.errors).toEqual(['docs/run.md:16: TerminalError: planted failure']);
    // createEngine in a runnable block is the test engine: its dataDir is a temp dir, not the block's.
    expect(existsSync(join(REPO, '.planted-data'))).toBe(false);
    const hang = await runBlocks([{ ...blocks[0]!, code: 'await new Promise(() => {});' }], { timeoutMs: 300 });
    expect(hang.errors).toEqual(['docs/run.md:3: Error: did not finish within 300 ms']);
  }, 60_000);
});
