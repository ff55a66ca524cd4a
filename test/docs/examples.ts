// The `@example` blocks of the sources' doc comments (sdk/, compose/, src/), as code blocks the
// docs test type-checks with the Markdown ones (check-blocks.ts, its prelude included): the
// API reference (npm run docs:api) shows them, so they must compile against the API too.
// Only ```ts fences inside an @example count; ` * ` margins are removed.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO, type CodeBlock } from './markdown.ts';

const DIRS = ['sdk', 'compose', 'src'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' || e.name === 'dist' ? [] : tsFiles(join(dir, e.name))) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
}

/** The ```ts blocks of every @example in `text` (a file's source), with 1-based fence lines. */
export function examplesIn(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const m of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const comment = m[0];
    const at = comment.indexOf('@example');
    if (at < 0) continue;
    const firstLine = text.slice(0, m.index).split('\n').length;
    const lines = comment.split('\n').map((l) => l.replace(/^\s*\*? ?/, ''));
    const exampleLine = comment.slice(0, at).split('\n').length - 1;
    for (let i = exampleLine; i < lines.length; i++) {
      if (i > exampleLine && /^@\w/.test(lines[i]!)) break; // the next tag ends the example
      if (!/^```(ts|typescript)\b/.test(lines[i]!)) continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
      blocks.push({ file, line: firstLine + start, lang: 'ts', code: body.join('\n'), fragment: false, given: '', runnable: false });
    }
  }
  return blocks;
}

/** Every @example ```ts block under sdk/, compose/ and src/, relative file names. */
export function exampleBlocks(root = REPO): CodeBlock[] {
  return DIRS.flatMap((d) => tsFiles(join(root, d))).sort().flatMap((f) => examplesIn(relative(root, f), readFileSync(f, 'utf8')));
}
