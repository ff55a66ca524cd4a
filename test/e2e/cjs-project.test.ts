// The `tranquil` command in a project whose package.json has no "type": "module" (npm's
// default): configs in every supported form load, a .ts/.js file with import/export loads as
// an ES module (bin/project-esm.mjs), and what cannot work says the fix in one line. The
// project links @tranquil/engine and @tranquil/sdk to this checkout (the bin then runs the
// sources). Configs written with require() are covered by test/package/pack-install.test.ts
// from the packed tarball: here require() would resolve the sdk's dist/, not the sources the
// CLI runs from a checkout.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHint } from '../../cli/project.ts';

const REPO = resolve(import.meta.dirname, '../..');
const BIN = join(REPO, 'bin/tranquil.mjs');
const root = mkdtempSync(join(tmpdir(), 'tranquil-cjs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const WF_ESM = `import { workflow, manual } from '@tranquil/sdk';
export const hello = workflow('hello', (w) => { w.trigger(manual()); w.run(async ({ input, step }) => step.do('greet', () => 'hi ' + (input as any).who)); });
`;
/** A fresh CommonJS project (no "type") with the given files; returns the CLI's result of `run hello`. */
function runIn(name: string, files: Record<string, string>, args: string[] = []) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'node_modules', '@tranquil'), { recursive: true });
  symlinkSync(REPO, join(dir, 'node_modules', '@tranquil', 'engine'));
  symlinkSync(join(REPO, 'sdk'), join(dir, 'node_modules', '@tranquil', 'sdk'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true }));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const r = spawnSync(process.execPath, [BIN, 'run', 'hello', '--input', '{"who":"cjs"}', '--json', ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TRANQUIL_BACKEND: 'sqlite' }, timeout: 60_000 });
  return { status: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
}

const succeeded = (r: ReturnType<typeof runIn>) => {
  expect(r.err).toBe('');
  expect(r.status).toBe(0);
  expect(JSON.parse(r.out)).toMatchObject({ status: 'succeeded', output: 'hi cjs' });
};

describe('tranquil in a CommonJS project (package.json without "type": "module")', () => {
  it('tranquil.config.ts with import/export and an extensionless import of a workflow module', () => {
    succeeded(runIn('ts', { 'src/hello.ts': WF_ESM, 'tranquil.config.ts': `import { hello } from './src/hello';\nexport default { workflows: [hello] };\n` }));
  }, 60_000);

  it('tranquil.config.js with import/export, and tranquil.config.mjs', () => {
    succeeded(runIn('js-esm', { 'hello.js': WF_ESM.replace('(input as any)', 'input'), 'tranquil.config.js': `import { hello } from './hello.js';\nexport default { workflows: [hello] };\n` }));
    succeeded(runIn('mjs', { 'tranquil.config.mjs': `${WF_ESM.replace('(input as any)', 'input')}export default { workflows: [hello] };\n` }));
  }, 60_000);

  it('what cannot work says the fix in one line', () => {
    const dirname = runIn('dirname', { 'tranquil.config.js': `${WF_ESM.replace('(input as any)', 'input')}export default { workflows: [hello], dataDir: __dirname + '/data' };\n` });
    expect(dirname.status).toBe(1);
    expect(dirname.err.split('\n')).toHaveLength(1);
    expect(dirname.err).toMatch(/__dirname is not defined.*\(fix: .*import\.meta\.dirname.*tranquil\.config\.cjs\)$/);
    const cts = runIn('cts', { 'tranquil.config.cts': WF_ESM }, ['--config', 'tranquil.config.cts']);
    expect(cts.status).toBe(1);
    expect(cts.err).toMatch(/a \.cts config is not supported \(fix: rename it to \.ts/);
  }, 60_000);

  it('hints for the other known causes', () => {
    expect(loadHint("ERR_MODULE_NOT_FOUND Cannot find package '@tranquil/sdk' imported from /x/tranquil.config.ts", '/x/tranquil.config.ts')).toMatch(/^install @tranquil\/sdk in this project/);
    expect(loadHint('ERR_REQUIRE_CYCLE_MODULE Cannot require() ES Module /x/tranquil.config.ts in a cycle.', '/x/tranquil.config.ts')).toMatch(/rename it \/x\/tranquil\.config\.mts/);
    expect(loadHint('SyntaxError: Unexpected token', '/x/tranquil.config.ts')).toBeUndefined();
  });
});
