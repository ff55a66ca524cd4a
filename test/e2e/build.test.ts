// The production build (npm run build -> dist/) runs on plain node, without tsx: a workflow
// defined with dist/sdk.js runs to completion on dist/index.js, and errors are one set of
// classes across the entry points (an sdk TimeoutError is the engine's TimeoutError).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tranquil-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('dist/ runs a workflow on plain node', () => {
  execFileSync(process.execPath, [join(REPO, 'scripts/build.mjs'), '--js'], { cwd: REPO, stdio: 'pipe' });
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
