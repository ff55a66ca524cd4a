// The production build (npm run build -> dist/) runs on plain node, without tsx: a workflow
// defined with dist/sdk.js runs to completion on dist/index.js, and errors are one set of
// classes across the entry points (an sdk TimeoutError is the engine's TimeoutError).
// The engine's start loads three files, and a host's own better-sqlite3 shares the
// engine's addon and error class (the build bundles the driver's JavaScript).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tranquil-build-'));
beforeAll(() => {
  execFileSync(process.execPath, [join(REPO, 'scripts/build.mjs'), '--js'], { cwd: REPO, stdio: 'pipe' });
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('dist/ runs a workflow on plain node', () => {
  const script = join(dir, 'main.mjs');
  writeFileSync(script, `
    import { createEngine } from ${JSON.stringify(join(REPO, 'dist/index.js'))};
    import { workflow, manual, TimeoutError, TerminalError } from ${JSON.stringify(join(REPO, 'dist/sdk.js'))};
    const greet = workflow('greet', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const a = await step.do('a', () => 'hello ' + input.name);
        const b = await step.do('b', () => a.length);
        return { a, b };
      });
    });
    const nap = workflow('nap', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.sleep('long', '1h'));
    });
    const engine = await createEngine({ dataDir: ${JSON.stringify(join(dir, 'data'))}, workflows: [greet, nap] });
    await engine.start();
    const done = await engine.result((await engine.trigger('greet', { name: 'dist' })).runId);
    // Node built-ins an engine loads only when it needs them (idle RSS, issue 17): node:crypto
    // (webhooks, keyrings, workflow files), node:worker_threads (the first WAL checkpoint).
    const lazyBuiltins = process.moduleLoadList.filter((m) => m === 'NativeModule crypto' || m === 'NativeModule worker_threads');
    const err = await engine.result((await engine.trigger('nap')).runId, { timeout: '50ms' }).catch((e) => e);
    class PaymentDeclined extends TerminalError {}
    const declined = workflow('declined', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('charge', () => { throw new PaymentDeclined('card declined'); }));
    });
    await engine.stop();
    const e2 = await createEngine({ dataDir: ${JSON.stringify(join(dir, 'data2'))}, workflows: [declined] });
    await e2.start();
    const failed = await e2.result((await e2.trigger('declined')).runId);
    await e2.stop();
    console.log(JSON.stringify({ status: done.status, output: done.output, sharedErrors: err instanceof TimeoutError, names: [err.name, failed.error?.name], lazyBuiltins }));
  `);
  const out = execFileSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop()!;
  // The build renames classes (minified, no keepNames): errors still carry their own names.
  expect(JSON.parse(out)).toEqual({ status: 'succeeded', output: { a: 'hello dist', b: 10 }, sharedErrors: true, names: ['TimeoutError', 'PaymentDeclined'], lazyBuiltins: [] });
});

/** dist files loaded with `file` through static imports (not import(): those load on use). */
function staticFiles(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*"(\.{1,2}\/[^"]+)"/g)) staticFiles(resolve(dirname(file), m[1]!), seen);
  return seen;
}

it("the engine's start loads three files: index.js, sdk.js and the one chunk they share", () => {
  // Each more file is a module resolution at every start (docs/performance.md, "Idle memory").
  const files = new Set([...staticFiles(join(REPO, 'dist/index.js')), ...staticFiles(join(REPO, 'dist/sdk.js'))]);
  expect([...files].map((f) => f.slice(REPO.length).replace(/chunk-\w+/, 'chunk-*')).sort()).toEqual(['dist/chunks/chunk-*.js', 'dist/index.js', 'dist/sdk.js']);
});

it("a host's own better-sqlite3 and the engine share one addon and one error class, whichever loads first", () => {
  for (const order of ['engine-first', 'host-first']) {
    const script = join(dir, `host-${order}.mjs`);
    writeFileSync(script, `
      import { createRequire } from 'node:module';
      const hostRequire = createRequire(${JSON.stringify(join(REPO, 'package.json'))});
      const hostSqlite = () => {
        const Database = hostRequire('better-sqlite3');
        const db = new Database(':memory:');
        try { db.exec('SELEC 1'); } catch (e) { return { shared: e instanceof Database.SqliteError, code: e.code }; } finally { db.close(); }
      };
      const before = ${JSON.stringify(order)} === 'host-first' ? hostSqlite() : undefined;
      const { createEngine } = await import(${JSON.stringify(join(REPO, 'dist/index.js'))});
      const { workflow, manual } = await import(${JSON.stringify(join(REPO, 'dist/sdk.js'))});
      const one = workflow('one', (w) => { w.trigger(manual()); w.run(async ({ step }) => step.do('s', () => 1)); });
      const engine = await createEngine({ dataDir: ${JSON.stringify(join(dir, 'host-'))} + ${JSON.stringify(order)}, workflows: [one] });
      await engine.start();
      const v = await engine.result((await engine.trigger('one')).runId);
      await engine.stop();
      console.log(JSON.stringify({ status: v.status, host: before ?? hostSqlite() }));
    `);
    const out = execFileSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop()!;
    expect(JSON.parse(out), order).toEqual({ status: 'succeeded', host: { shared: true, code: 'SQLITE_ERROR' } });
  }
});
