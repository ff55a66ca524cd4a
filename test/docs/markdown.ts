// The repo's Markdown as the docs tests read it: README.md and every docs/**/*.md, split into
// prose lines (fenced code removed) and fenced code blocks, and GitHub's heading anchors.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface CodeBlock {
  file: string; // relative to the repo
  line: number; // 1-based line of the opening fence
  lang: string;
  code: string;
  /** The nearest non-blank line before the fence is `<!-- fragment -->`. */
  fragment: boolean;
  /** TypeScript from a `<!-- given: ... -->` comment just above the fence (declarations the
   *  block relies on without showing them), or ''. */
  given: string;
  /** The fence's info string names `runnable` (```ts runnable): the block is also run
   *  against the test engine (test/docs/run-blocks.ts). */
  runnable: boolean;
}

export interface MarkdownFile {
  file: string; // relative to the repo
  prose: { line: number; text: string }[];
  blocks: CodeBlock[];
}

function mdFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? mdFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** README.md and docs/**\/*.md, relative to the repo, sorted. */
export const docFiles = (root = REPO): string[] => ['README.md', ...mdFiles(join(root, 'docs')).map((f) => relative(root, f)).sort()];

export function parseMarkdown(file: string, text: string): MarkdownFile {
  const lines = text.split('\n');
  const out: MarkdownFile = { file, prose: [], blocks: [] };
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)(.*)$/.exec(lines[i]!);
    if (!open) {
      out.prose.push({ line: i + 1, text: lines[i]! });
      continue;
    }
    const fence = open[2]!;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence); i++) body.push(lines[i]!);
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    // The HTML comment that ends just above the fence, if any (it may span lines).
    let comment = '';
    if (before >= 0 && lines[before]!.trim().endsWith('-->')) {
      let from = before;
      while (from > 0 && !lines[from]!.includes('<!--')) from--;
      comment = lines.slice(from, before + 1).join('\n').trim();
    }
    const fragment = /^<!--\s*fragment\b[\s\S]*-->$/.test(comment);
    const given = /^<!--\s*given:([\s\S]*)-->$/.exec(comment)?.[1]?.trim() ?? '';
    const runnable = open[4]!.split(/\s+/).includes('runnable');
    out.blocks.push({ file, line: start + 1, lang: open[3]!, code: body.join('\n'), fragment, given, runnable });
  }
  return out;
}

export const readMarkdown = (file: string, root = REPO): MarkdownFile => parseMarkdown(file, readFileSync(join(root, file), 'utf8'));

/** GitHub's anchor for each heading of a file (lower case, punctuation dropped, spaces to
 *  hyphens, repeats numbered -1, -2, ...). */
export function anchors(md: MarkdownFile): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of md.prose) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = h[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}
