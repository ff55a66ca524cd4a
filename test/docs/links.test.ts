// Every relative link and image in README.md and docs/**/*.md points at a file that exists,
// and a #fragment at a heading of that file: moving text between pages must not leave a
// reader on a 404. External (scheme:) links are not fetched. And README.md stays the front
// door (issue 43): at most 150 lines; the narratives belong in docs/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, docFiles, parseMarkdown, readMarkdown, REPO } from './markdown.ts';

interface Broken { at: string; target: string; why: string }

function brokenLinks(root: string, files: string[]): Broken[] {
  const md = new Map(files.map((f) => [f, readMarkdown(f, root)]));
  const broken: Broken[] = [];
  for (const [file, doc] of md) {
    for (const { line, text } of doc.prose) {
      // Inline code spans are not links.
      const prose = text.replace(/`[^`]*`/g, '');
      for (const m of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path, fragment] = target.split('#') as [string, string | undefined];
        const at = `${file}:${line}`;
        const dest = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        if (!existsSync(join(root, dest))) {
          broken.push({ at, target, why: `${dest} does not exist` });
          continue;
        }
        if (fragment === undefined || !dest.endsWith('.md') || statSync(join(root, dest)).isDirectory()) continue;
        const doc2 = md.get(dest) ?? readMarkdown(dest, root);
        if (!anchors(doc2).has(fragment)) broken.push({ at, target, why: `${dest} has no heading '#${fragment}'` });
      }
    }
  }
  return broken;
}

describe('docs links', () => {
  it('README.md is at most 150 lines', () => {
    const lines = readFileSync(join(REPO, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines, 'README.md is the front door: move the detail to docs/').toBeLessThanOrEqual(150);
  });

  it('every relative link in README.md and docs/ resolves, fragments included', () => {
    const files = docFiles();
    const broken = brokenLinks(REPO, files);
    const links = files.reduce((n, f) => n + readMarkdown(f).prose.reduce((k, l) => k + (l.text.replace(/`[^`]*`/g, '').match(/\]\((?![a-z][a-z0-9+.-]*:)/gi)?.length ?? 0), 0), 0);
    console.log(`docs links: ${links} relative links in ${files.length} files`);
    expect(links).toBeGreaterThan(30); // the README alone has ~25: a parser that finds none must fail
    expect(broken.map((b) => `${b.at}: (${b.target}) ${b.why}`)).toEqual([]);
  });

  it('reports a missing file, a missing heading and a link from a subfolder; ignores code and URLs', () => {
    const root = mkdtempSync(join(tmpdir(), 'tranquil-links-'));
    try {
      mkdirSync(join(root, 'docs', 'bench'), { recursive: true });
      writeFileSync(join(root, 'README.md'), '# Top\n[ok](docs/a.md#part-two) [gone](docs/gone.md) [bad](docs/a.md#nope) `[code](x.md)` [web](https://x.invalid/y)\n');
      writeFileSync(join(root, 'docs', 'a.md'), '# A\n## Part two\n[up](../README.md#top) ![img](pic.png)\n');
      writeFileSync(join(root, 'docs', 'bench', 'b.md'), '[a](../a.md) [self](#b)\n');
      const broken = brokenLinks(root, docFiles(root)).map((b) => `${b.at} ${b.why}`);
      expect(broken).toEqual([
        'README.md:2 docs/gone.md does not exist',
        "README.md:2 docs/a.md has no heading '#nope'",
        'docs/a.md:3 docs/pic.png does not exist',
        "docs/bench/b.md:1 docs/bench/b.md has no heading '#b'",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('GitHub anchors: punctuation dropped, code and links kept as text, repeats numbered', () => {
    const md = parseMarkdown('x.md', '# Idle memory\n## Backends: one flag\n### `engine.runs` and [docs](a.md)\n## Idle memory\n```\n# not a heading\n```');
    expect([...anchors(md)]).toEqual(['idle-memory', 'backends-one-flag', 'engineruns-and-docs', 'idle-memory-1']);
  });
});
