// Type-checks the ```ts blocks of Markdown files against the public API in ONE TypeScript
// program (one compile for all blocks, not a tsc per block). Each block is a module of its own
// (its names do not clash with other blocks'; top-level await is allowed), placed virtually at
// the repo's root so imports resolve as in the repo: @tranquil/* through the tsconfig paths to
// the sources, `./src/...` (the internals pages) to the sources. PRELUDE_TEXT below declares what every page may use
// without declaring it (engine, runId, w, step, ctx, input, createEngine, workflow, ...); a `<!-- given: ... -->` comment
// above a block adds declarations for that block; `<!-- fragment -->` exempts it.
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { readMarkdown, REPO, type CodeBlock } from './markdown.ts';

export interface BlockCheck {
  checked: CodeBlock[];
  fragments: CodeBlock[];
  /** `file:line: message`, the line being the Markdown file's. */
  errors: string[];
}

const VIRTUAL_DIR = REPO;
const PRELUDE = join(REPO, '.docs-prelude.d.ts');
// What the docs' code blocks may use without declaring it: the objects a page has already
// introduced in its prose, typed by the public API, so a block that misuses them fails like
// any other. App-specific functions a block calls are declared on the page itself, or in a
// `<!-- given: ... -->` comment above the block. Virtual (not a file under test/): in the
// repo's own tsc program these globals would hide real mistakes.
const PRELUDE_TEXT = `import type { Engine } from '@tranquil/engine';
import type { StepApi, WorkflowBuilder, WorkflowContext, WorkflowDefinition } from '@tranquil/sdk';

declare global {
  /** An engine from createEngine (README, Quick start). */
  const engine: Engine;
  /** A run id from engine.trigger / engine.emit. */
  const runId: string;
  /** Inside workflow('name', (w) => { ... }). */
  const w: WorkflowBuilder;
  /** Inside w.run(async ({ step, ctx, input }) => { ... }). */
  const step: StepApi;
  const ctx: WorkflowContext;
  const input: any;
  /** The app's workflow definitions, as passed to createEngine({ workflows }). */
  const workflows: WorkflowDefinition[];
  // The imports every page assumes (the README's Quick start shows them).
  const createEngine: typeof import('@tranquil/engine').createEngine;
  const workflow: typeof import('@tranquil/sdk').workflow;
  const manual: typeof import('@tranquil/sdk').manual;
  const event: typeof import('@tranquil/sdk').event;
  const schedule: typeof import('@tranquil/sdk').schedule;
  const webhook: typeof import('@tranquil/sdk').webhook;
  const TerminalError: typeof import('@tranquil/sdk').TerminalError;
}
export {};
`;
const isTs = (b: CodeBlock) => b.lang === 'ts' || b.lang === 'typescript';

function compilerOptions(): ts.CompilerOptions {
  const file = join(REPO, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(file, ts.sys.readFile).config, ts.sys, dirname(file));
  // Docs show snippets: an unused name or parameter there is not a mistake.
  return { ...parsed.options, noEmit: true, noUnusedLocals: false, noUnusedParameters: false };
}

/** One set of Markdown files; `label` prefixes its file names in the result. */
export interface DocSet {
  files: string[];
  /** Blocks from elsewhere (the sources' @example blocks: examples.ts), checked the same way. */
  blocks?: CodeBlock[];
  root?: string;
  label?: string;
}

/** Checks every set in one program; one result per set. */
export function checkBlocks(sets: DocSet[]): BlockCheck[] {
  const perSet = sets.map((s) => [...s.files.flatMap((f) => readMarkdown(f, s.root ?? REPO).blocks), ...(s.blocks ?? [])].filter(isTs).map((b) => ({ ...b, file: `${s.label ?? ''}${b.file}` })));
  const blocks = perSet.flat();
  const checked = blocks.filter((b) => !b.fragment);
  const virtual = new Map<string, { block: CodeBlock; header: number }>();
  const sources = new Map<string, string>([[PRELUDE, PRELUDE_TEXT]]);
  checked.forEach((block, i) => {
    const name = join(VIRTUAL_DIR, `.docs-block-${i}.ts`);
    const head = `// ${block.file}:${block.line}\n${block.given ? `${block.given}\n` : ''}`;
    virtual.set(name, { block, header: head.split('\n').length - 1 });
    sources.set(name, `${head}${block.code}\nexport {};\n`);
  });

  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => sources.has(f) || fileExists.call(host, f);
  host.readFile = (f) => sources.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, onError, create) => {
    const text = sources.get(f);
    return text !== undefined ? ts.createSourceFile(f, text, lang) : getSourceFile.call(host, f, lang, onError, create);
  };
  const program = ts.createProgram([...sources.keys()], options, host);

  const errors: string[] = [];
  // Only the blocks' (and the prelude's) diagnostics: the engine's own sources are checked by
  // tsc in npm test, and asking for theirs here would type-check all of them again.
  const own = [...sources.keys()].map((f) => program.getSourceFile(f)!);
  const diagnostics = [...program.getOptionsDiagnostics(), ...own.flatMap((sf) => [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)])];
  for (const d of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0];
    const at = d.file && virtual.get(d.file.fileName);
    if (!d.file || !at) {
      errors.push(`${d.file ? d.file.fileName : 'program'}: TS${d.code} ${message}`);
      continue;
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const inBlock = line - at.header;
    const where = inBlock < 0 ? `${at.block.file}:${at.block.line} (its given comment)` : `${at.block.file}:${at.block.line + 1 + inBlock}`;
    errors.push(`${where}: TS${d.code} ${message}`);
  }
  return sets.map((s, i) => {
    const own = (file: string) => (s.label ? file.startsWith(s.label) : !sets.some((o) => o.label && file.startsWith(o.label)));
    return {
      checked: perSet[i]!.filter((b) => !b.fragment),
      fragments: perSet[i]!.filter((b) => b.fragment),
      errors: errors.filter((e) => own(e)),
    };
  });
}
