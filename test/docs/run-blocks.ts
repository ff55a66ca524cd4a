// Runs the Markdown blocks marked runnable (```ts runnable) against the test engine, one after
// another in this process: each block becomes a module in a scratch dir under the repo (so
// its bare imports, zod say, resolve from node_modules), its imports rewritten: @tranquil/engine
// and @tranquil/engine/testing to the shims in ./runnable/ (createEngine gives a test engine:
// a temp data dir, a manual clock; engines a block leaves open are closed after it),
// @tranquil/sdk to the source, `./x` relative to the repo's root (where check-blocks.ts places
// blocks too). The prelude's functions (createEngine, workflow, manual, event, schedule,
// webhook, TerminalError) are globals while a block runs, as check-blocks.ts declares them;
// its objects (engine, step, ...) are not: a block that uses them is not self-contained.
// A block passes when its module finishes evaluating (top-level awaits included) without
// throwing within `timeoutMs`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { REPO, type CodeBlock } from './markdown.ts';

const SHIMS: Record<string, string> = {
  '@tranquil/engine': join(REPO, 'test/docs/runnable/engine.ts'),
  '@tranquil/engine/testing': join(REPO, 'test/docs/runnable/testing.ts'),
  '@tranquil/sdk': join(REPO, 'sdk/index.ts'),
};

/** The block's code with its module specifiers rewritten (same lines, so positions hold). */
export function rewriteImports(code: string): string {
  const sf = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edits: { start: number; end: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    const spec =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier
      : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0]) ? node.arguments[0]
      : undefined;
    if (spec) {
      const target = SHIMS[spec.text] ?? (spec.text.startsWith('.') ? resolve(REPO, spec.text) : undefined);
      if (target) edits.push({ start: spec.getStart(sf), end: spec.getEnd(), text: JSON.stringify(isAbsolute(target) ? target : spec.text) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  let out = code;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

export interface RunResult {
  ran: CodeBlock[];
  /** `file:line: Name: message` per failed block; the line is the Markdown file's (the
   *  block's own line where the stack names it, else the fence's). */
  errors: string[];
}

async function preludeGlobals(): Promise<Record<string, unknown>> {
  const engine = await import('./runnable/engine.ts');
  const sdk = await import('../../sdk/index.ts');
  return { createEngine: engine.createEngine, workflow: sdk.workflow, manual: sdk.manual, event: sdk.event, schedule: sdk.schedule, webhook: sdk.webhook, TerminalError: sdk.TerminalError };
}

/** Runs each block in turn; never throws for a block's failure (it is in `errors`). */
export async function runBlocks(blocks: CodeBlock[], options: { timeoutMs?: number } = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  mkdirSync(join(REPO, '.scratch'), { recursive: true });
  const dir = mkdtempSync(join(REPO, '.scratch', 'docs-run-'));
  const globals = await preludeGlobals();
  const { closeOpenEngines } = await import('./runnable/testing.ts');
  const errors: string[] = [];
  try {
    for (const [i, block] of blocks.entries()) {
      const file = join(dir, `block-${i}.ts`);
      writeFileSync(file, `${rewriteImports(block.code)}\nexport {};\n`);
      const saved = Object.keys(globals).map((k) => [k, Object.getOwnPropertyDescriptor(globalThis, k)] as const);
      Object.assign(globalThis, globals);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          import(pathToFileURL(file).href),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`did not finish within ${timeoutMs} ms`)), timeoutMs))),
        ]);
      } catch (err) {
        const e = err as Error;
        // The block's own line, when the stack names the module (vitest maps it to the source).
        const at = new RegExp(`block-${i}\\.ts:(\\d+)`).exec(e?.stack ?? '')?.[1];
        const line = at ? block.line + Number(at) : block.line;
        errors.push(`${block.file}:${line}: ${e?.name ?? 'Error'}: ${String(e?.message ?? e).split('\n')[0]}`);
      } finally {
        clearTimeout(timer);
        for (const [k, d] of saved) {
          if (d) Object.defineProperty(globalThis, k, d);
          else delete (globalThis as Record<string, unknown>)[k];
        }
        await closeOpenEngines();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { ran: blocks, errors };
}
