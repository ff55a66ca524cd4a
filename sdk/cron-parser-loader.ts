// cron-parser (with luxon) loads on first use, not with the engine or the sdk: a program whose
// workflows have no schedule trigger never pays for it. The first schedule() call loads it (to
// validate the expression at definition time) and the cron calendar adapter reuses it.
// Synchronous (createRequire), because schedule() and the SlotCalendar the planner calls are
// synchronous. The production build (scripts/build.mjs) keeps cron-parser external: it
// resolves from node_modules at that first use, and dist/ holds no copy of it.
// node:module is reached through process.getBuiltinModule, not a static import: the sdk also
// loads in Deno run children, where a node: import costs the Node compatibility layer at
// start even when no schedule() is ever called.
type CronParser = typeof import('cron-parser');
type ModuleApi = typeof import('node:module');
let mod: CronParser | undefined;

export function cronParser(): CronParser {
  if (mod) return mod;
  const api = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:module') as ModuleApi | undefined;
  if (!api) throw new Error('schedule(): cron-parser cannot be loaded here (no process.getBuiltinModule)');
  return (mod = api.createRequire(import.meta.url)('cron-parser') as CronParser);
}
