// The package as a user gets it: `npm pack` of @tranquil/engine and @tranquil/sdk, installed
// into a fresh project outside the repo; a workflow is type-checked against the shipped .d.ts
// (a wrong type must fail), compiled, and run on plain node (no tsx); `npx tranquil runs list`
// reads the run back through the installed bin (dist/cli.js). `tranquil init` scaffolds fresh
// ESM and CommonJS projects, TypeScript and JavaScript, whose generated test and `tranquil run` pass.
//
// Long variant (TRANQUIL_PACK_TEST=1; .ci/run runs it after `npm test`, not inside it: it
// rebuilds dist/, which test/e2e/build.test.ts also writes): the full build runs tsc for the
// declarations and npm extracts the dependencies, ~20 s on an idle 2-core machine, up to ~2 min
// on a loaded one. The install is
// `--prefer-offline --ignore-scripts --omit=optional` (tarballs from the npm cache the checkout's
// `npm ci` filled; the registry answers what that cache lacks: `npm ci` stores tarballs, not the
// package metadata a fresh resolve reads, so `--offline` failed on a machine with a new cache;
// no Restate/Deno platform binaries, which the test does not use), and
// better-sqlite3's native addon is copied from the repo's own install (same version, same
// node) instead of compiling it from source, which takes minutes without its prebuilt download.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

const WORKFLOW = `
import { createEngine, type RunView } from '@tranquil/engine';
import { createTestEngine } from '@tranquil/engine/testing';
import { workflow, manual, TimeoutError } from '@tranquil/sdk';

const greet = workflow('greet', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => 'hello ' + (input as { name: string }).name);
    return { a, n: a.length };
  });
});
const nap = workflow('nap', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.sleep('long', '1h'));
});
const engine = await createEngine({ dataDir: 'data', workflows: [greet, nap] });
await engine.start();
const view: RunView = await engine.result((await engine.trigger('greet', { name: 'pack' })).runId);
const late = await engine.result((await engine.trigger('nap')).runId, { timeout: '50ms' }).catch((e: unknown) => e);
await engine.stop();
console.log(JSON.stringify({ status: view.status, output: view.output, testing: typeof createTestEngine, sharedErrors: late instanceof TimeoutError }));
`;
const TSCONFIG = { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', skipLibCheck: true, types: [] }, files: ['main.ts'] };

const PACK = Boolean(process.env.TRANQUIL_PACK_TEST);
describe.skipIf(!PACK)(`npm pack -> install -> run (builds dist/ with tsc and installs)${PACK ? '' : ' [skipped: runs with TRANQUIL_PACK_TEST=1, as .ci/run does after npm test]'}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-pack-'));
  const project = join(dir, 'app');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (cmd: string, args: string[], cwd: string) => {
    const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: NPM_ENV, timeout: 240_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
    return r.stdout;
  };

  beforeAll(() => {
    execFileSync(process.execPath, [join(REPO, 'scripts/build.mjs')], { cwd: REPO, stdio: 'pipe' });
    run('npm', ['pack', '--pack-destination', dir], REPO);
    run('npm', ['pack', '-w', 'sdk', '--pack-destination', dir], REPO);
    const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz')).map((f) => join(dir, f));
    expect(tarballs).toHaveLength(2);
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--omit=optional', ...tarballs], project);
    const addon = join('node_modules', 'better-sqlite3', 'build', 'Release');
    mkdirSync(join(project, addon), { recursive: true });
    copyFileSync(join(REPO, addon, 'better_sqlite3.node'), join(project, addon, 'better_sqlite3.node'));
  }, 300_000);

  it('the shipped declarations reject a wrong type', () => {
    writeFileSync(join(project, 'main.ts'), `${WORKFLOW}\nconst wrong: number = view.status;\n`);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const r = spawnSync(process.execPath, [TSC, '-p', '.', '--noEmit'], { cwd: project, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stdout).toMatch(/main\.ts\(\d+,\d+\): error TS2322/);
    expect(r.stdout.trim().split('\n').filter((l) => /error TS/.test(l))).toHaveLength(1);
  }, 120_000);

  it('type-checks a workflow against the shipped .d.ts, runs it on plain node, lists it with npx tranquil', () => {
    writeFileSync(join(project, 'main.ts'), WORKFLOW);
    run(process.execPath, [TSC, '-p', '.'], project);
    const out = run(process.execPath, ['out/main.js'], project).trim().split('\n').pop()!;
    expect(JSON.parse(out)).toEqual({ status: 'succeeded', output: { a: 'hello pack', n: 10 }, testing: 'function', sharedErrors: true });
    const list = JSON.parse(run('npx', ['--offline', 'tranquil', 'runs', 'list', '--data-dir', 'data', '--json'], project)) as { workflow: string; status: string }[];
    expect(list.map((r) => `${r.workflow}:${r.status}`).sort()).toEqual(['greet:succeeded', 'nap:sleeping']);
  }, 120_000);

  // `tranquil init` in fresh projects, ESM and CommonJS (package.json with and without
  // "type": "module"), TypeScript and JavaScript: the generated test passes on node's runner,
  // the generated TypeScript type-checks against the shipped .d.ts, `tranquil run` loads the
  // generated config and runs the workflow, and a second init overwrites nothing. The projects
  // share the install above (their node_modules link to its entries) plus, for TypeScript,
  // @types/node and esbuild's platform binary (tsx needs it; the install omits optional packages).
  describe('tranquil init, then its test and tranquil run', () => {
    const shared = () => {
      const modules = join(project, 'node_modules');
      const esbuild = `@esbuild/${process.platform}-${process.arch}`;
      mkdirSync(join(modules, '@esbuild'), { recursive: true });
      cpSync(join(REPO, 'node_modules', esbuild), join(modules, esbuild), { recursive: true });
      return modules;
    };
    const devReloads = async (app: string, workflowFile: string) => {
      const dev = spawn(join(app, 'node_modules', '.bin', 'tranquil'), ['dev', '--json', '--no-panel'], { cwd: app, env: NPM_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
      const events: string[] = [];
      let stderr = '';
      dev.stderr.on('data', (d) => (stderr += d));
      createInterface({ input: dev.stdout }).on('line', (l) => events.push((JSON.parse(l) as { event: string }).event));
      const until = async (event: string) => {
        for (const end = Date.now() + 60_000; !events.includes(event); await new Promise((r) => setTimeout(r, 200))) {
          if (Date.now() > end || dev.exitCode !== null) throw new Error(`tranquil dev: no '${event}' (saw ${events.join(', ')}; stderr ${stderr})`);
        }
      };
      await until('ready');
      writeFileSync(join(app, workflowFile), readFileSync(join(app, workflowFile), 'utf8').replace("'world'", "'there'"));
      await until('reloaded');
      dev.kill('SIGINT');
      await until('stopped');
    };
    const cases = [['esm', 'ts'], ['cjs', 'ts'], ['esm', 'js'], ['cjs', 'js']] as const;
    for (const [kind, lang] of cases) {
      it(`${kind === 'esm' ? 'ES module' : 'CommonJS'} ${lang === 'ts' ? 'TypeScript' : 'JavaScript'} project`, async () => {
        const modules = shared();
        const app = join(dir, `init-${kind}-${lang}`);
        mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
        for (const e of readdirSync(modules)) if (e !== '@types') symlinkSync(join(modules, e), join(app, 'node_modules', e));
        symlinkSync(join(REPO, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'));
        writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `init-${kind}-${lang}`, private: true, ...(kind === 'esm' ? { type: 'module' } : {}) }));
        if (lang === 'ts') writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] }, include: ['**/*.ts'], exclude: ['node_modules'] }));

        const first = JSON.parse(run('npx', ['--offline', 'tranquil', 'init', '--json'], app)) as { module: string; language: string; wrote: string[]; skipped: unknown[]; next: string[] };
        const config = kind === 'cjs' && lang === 'js' ? 'tranquil.config.js' : `tranquil.config.${lang}`;
        expect(first).toMatchObject({ module: kind, language: lang, wrote: [config, `workflows/hello.${lang}`, `workflows/hello.test.${lang}`], skipped: [] });
        expect(first.next).toHaveLength(2);
        if (kind === 'cjs' && lang === 'js') {
          expect(readFileSync(join(app, config), 'utf8')).toMatch(/require\('\.\/workflows\/hello\.js'\)/);
          // The package's ES modules from require() in a CommonJS project (docs/package.md).
          const required = run(process.execPath, ['-e', "const e = require('@tranquil/engine'), t = require('@tranquil/engine/testing'), s = require('@tranquil/sdk'); console.log([typeof e.createEngine, typeof t.createTestEngine, typeof s.workflow, s.TerminalError === require('@tranquil/engine/sdk').TerminalError].join(' '))"], app);
          expect(required.trim()).toBe('function function function true');
        }
        if (lang === 'ts') run(process.execPath, [TSC, '-p', '.'], app);

        // The printed next commands, as a user would type them.
        const [runCmd, testCmd] = first.next.map((c) => c.split(' '));
        expect(testCmd!.slice(0, 2)).toEqual(lang === 'ts' ? ['npx', 'tsx'] : ['node', '--test']);
        const tested = testCmd![0] === 'node' ? run(process.execPath, testCmd!.slice(1), app) : run('npx', ['--offline', ...testCmd!.slice(1)], app);
        expect(tested).toMatch(/^# pass 1$/m);
        expect(runCmd!.slice(0, 4)).toEqual(['npx', 'tranquil', 'run', 'hello']);
        const r = JSON.parse(run('npx', ['--offline', 'tranquil', 'run', 'hello', '--input', '{"name":"you"}', '--json'], app)) as { status: string; output: { greeting: string } };
        expect(r.status).toBe('succeeded');
        expect(r.output.greeting).toMatch(/^Hello, you! \(/);

        // `tranquil dev` from the installed package (its watcher, chokidar, resolved from node_modules):
        // ready, a save of the workflow reloads it, SIGINT stops it.
        if (kind === 'esm' && lang === 'js') await devReloads(app, `workflows/hello.${lang}`);

        writeFileSync(join(app, `workflows/hello.${lang}`), '// mine\n');
        const again = JSON.parse(run('npx', ['--offline', 'tranquil', 'init', '--json'], app)) as { wrote: string[]; skipped: { file: string }[] };
        expect(again.wrote).toEqual([]);
        expect(again.skipped.map((s) => s.file)).toEqual([config, `workflows/hello.${lang}`, `workflows/hello.test.${lang}`]);
        expect(readFileSync(join(app, `workflows/hello.${lang}`), 'utf8')).toBe('// mine\n');
      }, 300_000);
    }
  });
});
