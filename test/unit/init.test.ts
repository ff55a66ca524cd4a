// `tranquil init` (cli/init.ts) on a directory: what it writes for each module system and
// language, that it never overwrites, and its one-line errors. The generated code itself is
// run (its test, `tranquil run`) from the packed tarball in test/package/pack-install.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeInit, init } from '../../cli/init.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const project = (pkg: object | string | undefined, files: Record<string, string> = {}) => {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-init-'));
  dirs.push(d);
  if (pkg !== undefined) writeFileSync(join(d, 'package.json'), typeof pkg === 'string' ? pkg : JSON.stringify(pkg));
  for (const [f, t] of Object.entries(files)) writeFileSync(join(d, f), t);
  return d;
};
const read = (d: string, f: string) => readFileSync(join(d, f), 'utf8');

describe('tranquil init', () => {
  it('an ES module TypeScript project (tsconfig.json): ESM TypeScript files, tsx for the test', () => {
    const d = project({ name: 'a', type: 'module' }, { 'tsconfig.json': '{}' });
    const r = init(d);
    expect(r).toMatchObject({ module: 'esm', language: 'ts', wrote: ['tranquil.config.ts', 'workflows/hello.ts', 'workflows/hello.test.ts'], skipped: [] });
    expect(r.next).toEqual([`npx tranquil run hello --input '{"name":"you"}'`, 'npx tsx --test workflows/hello.test.ts']);
    expect(read(d, 'tranquil.config.ts')).toMatch(/^import \{ hello \} from '\.\/workflows\/hello\.js';$/m);
    expect(read(d, 'workflows/hello.test.ts')).toMatch(/import \{ createTestEngine \} from '@tranquil\/engine\/testing';/);
    expect(describeInit(r)).toMatch(/^ES module TypeScript project in .*\n {2}wrote {3}tranquil\.config\.ts\n[\s\S]*next:\n {2}npx tranquil run hello/);
  });

  it('a CommonJS JavaScript project (no "type", no typescript): require/module.exports, node --test', () => {
    const d = project({ name: 'b' });
    const r = init(d);
    expect(r).toMatchObject({ module: 'cjs', language: 'js', wrote: ['tranquil.config.js', 'workflows/hello.js', 'workflows/hello.test.js'] });
    expect(r.next[1]).toBe('node --test workflows/hello.test.js');
    for (const f of r.wrote) expect(read(d, f)).not.toMatch(/^(import|export) /m);
    expect(read(d, 'workflows/hello.js')).toMatch(/module\.exports = \{ hello \};/);
  });

  it('typescript in devDependencies means TypeScript; --javascript overrides; both flags is an error', () => {
    expect(init(project({ name: 'c', devDependencies: { typescript: '5.9.3' } })).language).toBe('ts');
    expect(init(project({ name: 'c', type: 'module', devDependencies: { typescript: '5.9.3' } }), { javascript: true })).toMatchObject({ module: 'esm', language: 'js' });
    expect(() => init(project({ name: 'c' }), { typescript: true, javascript: true })).toThrow(/use one, not both/);
  });

  it('never overwrites: existing files and any existing tranquil.config.* are skipped and said', () => {
    const d = project({ name: 'd', type: 'module' }, { 'tranquil.config.mjs': 'export default { workflows: [] };\n' });
    const r = init(d);
    expect(r.wrote).toEqual(['workflows/hello.js', 'workflows/hello.test.js']);
    expect(r.skipped).toEqual([{ file: 'tranquil.config.js', reason: 'tranquil.config.mjs exists: add hello from ./workflows/hello.js to its workflows yourself' }]);
    expect(read(d, 'tranquil.config.mjs')).toBe('export default { workflows: [] };\n');
    writeFileSync(join(d, 'workflows/hello.js'), '// mine\n');
    const again = init(d);
    expect(again.wrote).toEqual([]);
    expect(again.skipped.map((s) => s.file)).toEqual(['tranquil.config.js', 'workflows/hello.js', 'workflows/hello.test.js']);
    expect(read(d, 'workflows/hello.js')).toBe('// mine\n');
    expect(describeInit(again)).toMatch(/skipped workflows\/hello\.js \(exists\)/);
  });

  it('no package.json, or one that is not JSON or has a bad "type": one line naming the fix', () => {
    expect(() => init(project(undefined))).toThrow(/^init: no package\.json in .* \(run 'npm init -y' there first/);
    expect(() => init(project('{ nope'))).toThrow(/package\.json is not valid JSON/);
    expect(() => init(project({ type: 'esm' }))).toThrow(/type/);
  });
});
