// yaml and @marcbachmann/cel-js load on first use, not with the engine: an engine whose
// workflows are all code (no plainWorkflow(), no `plainWorkflows` files) never pays for them
// (with cron-parser and zod's unused locales, ~2.5 MiB of an idle built engine; docs/performance.md).
// Synchronous (createRequire), because loadPlainWorkflow() and plainWorkflow() are
// synchronous public APIs. cel-js is an ES
// module: Node >= 20.19 require()s it (package.json engines). The production build keeps both
// packages external (scripts/build.mjs), so they resolve from node_modules at that first use.
// node:module is reached through process.getBuiltinModule, not a static import, as in
// sdk/cron-parser-loader.ts.
type Yaml = typeof import('yaml');
type Cel = typeof import('@marcbachmann/cel-js');
type ModuleApi = typeof import('node:module');

let yaml: Yaml | undefined;
let cel: Cel | undefined;

function load(id: string): unknown {
  const api = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:module') as ModuleApi | undefined;
  if (!api) throw new Error(`plain workflows: ${id} cannot be loaded here (no process.getBuiltinModule)`);
  return api.createRequire(import.meta.url)(id);
}

/** The yaml package (parser of plain workflow files). */
export const yamlModule = (): Yaml => (yaml ??= load('yaml') as Yaml);

/** The CEL package (conditions and templates of plain workflows). */
export const celModule = (): Cel => (cel ??= load('@marcbachmann/cel-js') as Cel);
