// Module hook for the `tranquil` command (bin/tranquil.mjs): a project file written with
// import/export loads as an ES module even where package.json has no "type": "module" (npm's
// default). tsx, like node, would load such a .ts or .js file as CommonJS there, and node then
// refuses the ES syntax inside with "Cannot require() ES Module ... in a cycle". Loading it as
// ESM keeps one copy of @tranquil/engine in the process (tsx's CommonJS path would compile the
// package's ES modules into a second one, with classes of its own). Files in node_modules and
// files written with require/module.exports are left as they are.
//
// `tranquil dev` reloads a project by importing its config as `<config>?tranquil-gen=<n>`: every
// project file that config reaches by a relative path is then imported as a fresh module of that
// generation (the query is passed on); packages (bare specifiers) keep their one instance.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

// A top-level import or export statement (not TypeScript's `import x = require()`/`export =`).
const ES_SYNTAX = /^\s*(import\s*(?:[\w$]+\s*(?:,|from)|[{*'"])|export\s+(?!=)|export\s*[{*])/m;
const CJS_SYNTAX = /\bmodule\.exports\b|^\s*exports\.[\w$]+\s*=|^\s*import\s+[\w$]+\s*=\s*require\(|^\s*export\s*=/m;
const PROJECT_FILE = /^(?!.*\/node_modules\/).*\.(?:ts|tsx|js|jsx)$/;

const GENERATION = /[?&]tranquil-gen=(\d+)/;
const MODULE_FILE = /\.(?:ts|tsx|mts|js|jsx|mjs)$/;

export async function resolve(specifier, context, next) {
  let r = await next(specifier, context);
  if (!r.url.startsWith('file:')) return r;
  // tsx marks a CommonJS file imported from ESM with queries, one of them inside the path
  // (`hello.ts%3Ftsx-commonjs-export-preparse=1?...`): the file is what comes before them.
  const path = fileURLToPath(r.url.split('?')[0].replace(/%3F.*$/i, ''));
  if (r.format === 'commonjs' && PROJECT_FILE.test(path)) {
    let source;
    try {
      source = readFileSync(path, 'utf8');
    } catch {
      return r;
    }
    if (ES_SYNTAX.test(source) && !CJS_SYNTAX.test(source)) r = { ...r, url: pathToFileURL(path).href, format: 'module' };
  }
  // The config itself carries its generation; a project file it reaches by a relative path inherits it.
  const generation = GENERATION.exec(specifier)?.[1] ?? (/^\.{0,2}\//.test(specifier) && context.parentURL ? GENERATION.exec(context.parentURL)?.[1] : undefined);
  if (generation && r.format !== 'commonjs' && MODULE_FILE.test(path) && !path.includes('/node_modules/')) {
    r = { ...r, url: `${pathToFileURL(path).href}?tranquil-gen=${generation}` };
  }
  return r;
}
