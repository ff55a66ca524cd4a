// Module hook for the `tranquil` command (bin/tranquil.mjs): a project file written with
// import/export loads as an ES module even where package.json has no "type": "module" (npm's
// default). tsx, like node, would load such a .ts or .js file as CommonJS there, and node then
// refuses the ES syntax inside with "Cannot require() ES Module ... in a cycle". Loading it as
// ESM keeps one copy of @tranquil/engine in the process (tsx's CommonJS path would compile the
// package's ES modules into a second one, with classes of its own). Files in node_modules and
// files written with require/module.exports are left as they are.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

// A top-level import or export statement (not TypeScript's `import x = require()`/`export =`).
const ES_SYNTAX = /^\s*(import\s*(?:[\w$]+\s*(?:,|from)|[{*'"])|export\s+(?!=)|export\s*[{*])/m;
const CJS_SYNTAX = /\bmodule\.exports\b|^\s*exports\.[\w$]+\s*=|^\s*import\s+[\w$]+\s*=\s*require\(|^\s*export\s*=/m;
const PROJECT_FILE = /^(?!.*\/node_modules\/).*\.(?:ts|tsx|js|jsx)$/;

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.format !== 'commonjs' || !r.url.startsWith('file:')) return r;
  // tsx marks a CommonJS file imported from ESM with queries, one of them inside the path
  // (`hello.ts%3Ftsx-commonjs-export-preparse=1?...`): the file is what comes before them.
  const path = fileURLToPath(r.url.split('?')[0].replace(/%3F.*$/i, ''));
  if (!PROJECT_FILE.test(path)) return r;
  let source;
  try {
    source = readFileSync(path, 'utf8');
  } catch {
    return r;
  }
  return ES_SYNTAX.test(source) && !CJS_SYNTAX.test(source) ? { ...r, url: pathToFileURL(path).href, format: 'module' } : r;
}
