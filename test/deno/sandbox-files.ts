// Hostile workflow files for test/deno/sandbox.test.ts: [attack, main module source, what the
// refusal says]. Each loads something a file approved with no grants must never reach.
import { join } from 'node:path';

const tail = `export default 1;\n`;

export function hostileFiles(secret: string): [string, string, string][] {
  const key = join(secret, 'id_rsa');
  const escaped = key.replaceAll('/', '\\u002f');
  return [
    ["an absolute text import written with '\\u002f' escapes (table #1)", `const k = await import('${escaped}', { with: { type: 'text' } });\n${tail}`, `imports '${key}', which resolves to ${key}, outside the workflow's snapshot`],
    ['a relative JSON import leaving the snapshot (table #1)', `import j from '../../../../../../../../..${join(secret, 'serve.json')}' with { type: 'json' };\n${tail}`, `resolves to ${join(secret, 'serve.json')}, outside the workflow's snapshot`],
    ['an npm: import (table #3)', `await import('npm:left-pad@1.3.0');\n${tail}`, "imports 'npm:left-pad@1.3.0', a npm: specifier (not granted"],
    ['a jsr: import', `import * as p from 'jsr:@std/path';\n${tail}`, "imports 'jsr:@std/path', a jsr: specifier"],
    ['a node: built-in', `import fs from 'node:fs';\n${tail}`, "imports 'node:fs', a node: specifier"],
    ['a data: module (which could import anything itself)', `import d from 'data:text/javascript,export default 1';\n${tail}`, "a data: specifier"],
    ['a remote module', `import r from 'https://example.com/x.ts';\n${tail}`, "imports 'https://example.com/x.ts', a https: specifier"],
  ];
}
