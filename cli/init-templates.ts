// What `tranquil init` writes (cli/init.ts): a config, one example workflow and its test on
// the test engine, in the project's own module system (ESM or CommonJS) and language. The test
// runs on node's built-in runner, so the project needs no test framework; TypeScript runs
// through tsx (a dependency of @tranquil/engine).
export type ModuleKind = 'esm' | 'cjs';
export type Language = 'ts' | 'js';

export interface Scaffold {
  config: { file: string; text: string };
  workflow: { file: string; text: string };
  test: { file: string; text: string };
  /** The command that runs the generated test. */
  testCommand: string;
}

const WORKFLOW_BODY = `workflow('hello', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    // Each step's result is journaled: after a crash the run resumes here, not from scratch.
    const name = await step.do('name', () => String(input?.name ?? 'world'));
    // Retried with backoff when it throws; pass idempotencyKey to the systems you call.
    const greeting = await step.do('greet', { retries: { limit: 3, delay: '1s' } }, ({ idempotencyKey }) => {
      return \`Hello, \${name}! (\${idempotencyKey})\`;
    });
    // A durable timer: the run sleeps as a row in the data dir, not in memory.
    if (input?.pause) await step.sleep('pause', input.pause);
    return { greeting };
  });
})`;

const TEST_BODY = (load: string) => `test('hello greets by name, after its pause', async () => {
  const t = await createTestEngine({ workflows: [hello] });
  try {
    const { runId } = await t.engine.trigger('hello', { name: 'Ada', pause: '1h' });
    await t.idle();
    assert.equal((await t.engine.runs.get(runId)).status, 'sleeping');
    await t.advance('1h'); // the manual clock: an hour passes at once
    const run = await t.engine.runs.get(runId);
    assert.equal(run.status, 'succeeded');
    assert.match(${load}.greeting, /^Hello, Ada!/);
  } finally {
    await t.close();
  }
});
`;

export function scaffold(kind: ModuleKind, lang: Language): Scaffold {
  const ext = lang;
  const wf = `workflows/hello.${ext}`;
  const testFile = `workflows/hello.test.${ext}`;
  const testCommand = lang === 'ts' ? `npx tsx --test ${testFile}` : `node --test ${testFile}`;
  // `.js` in import specifiers: node needs it in ESM, and tsc and tsx map it to the .ts file.
  if (kind === 'cjs' && lang === 'js') {
    return {
      config: { file: 'tranquil.config.js', text: `// Read by the tranquil command (tranquil run, tranquil serve): your workflows and engine settings.\nconst { hello } = require('./workflows/hello.js');\n\nmodule.exports = { workflows: [hello] };\n` },
      workflow: { file: wf, text: `const { workflow, manual } = require('@tranquil/sdk');\n\nconst hello = ${WORKFLOW_BODY};\n\nmodule.exports = { hello };\n` },
      test: { file: testFile, text: `const { test } = require('node:test');\nconst assert = require('node:assert/strict');\nconst { createTestEngine } = require('@tranquil/engine/testing');\nconst { hello } = require('./hello.js');\n\n${TEST_BODY('run.output')}` },
      testCommand,
    };
  }
  const typed = lang === 'ts';
  return {
    config: { file: `tranquil.config.${ext}`, text: `// Read by the tranquil command (tranquil run, tranquil serve): your workflows and engine settings.\nimport { hello } from './workflows/hello.js';\n\nexport default { workflows: [hello] };\n` },
    workflow: {
      file: wf,
      text: `import { workflow, manual${typed ? ', type Duration' : ''} } from '@tranquil/sdk';\n\n${typed ? `export interface HelloInput {\n  name?: string;\n  pause?: Duration;\n}\n\nexport const hello = workflow<HelloInput | undefined, { greeting: string }>(${WORKFLOW_BODY.slice('workflow('.length)};\n` : `export const hello = ${WORKFLOW_BODY};\n`}`,
    },
    test: {
      file: testFile,
      text: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { createTestEngine } from '@tranquil/engine/testing';\nimport { hello } from './hello.js';\n\n${TEST_BODY(typed ? '(run.output as { greeting: string })' : 'run.output')}`,
    },
    testCommand,
  };
}
