// Keeps the host's global Reflect untouched while inversify, the composition tool, uses the
// reflect-metadata polyfill. @inversifyjs/container does `import 'reflect-metadata/lite'` at
// load (ten functions and a non-configurable registry symbol written onto the global Reflect),
// and inversify calls `Reflect.getOwnMetadata` / `Reflect.defineMetadata` on every binding.
// So globalThis.Reflect is swapped for a private object inheriting from the real one twice:
// while inversify's modules evaluate (the polyfill installs itself there), and while the
// container binds and resolves (withContainerReflect). The real Reflect is never written, so a
// host that loaded reflect-metadata itself keeps its functions. Both windows are synchronous:
// no host code runs inside them. (A non-configurable symbol cannot be deleted afterwards, which
// is why this swaps rather than snapshotting and deleting.)
// Limit: a host that uses the SAME inversify module instance (tsx from these sources, one
// node_modules) and relies on inversify's implicit polyfill import must `import
// 'reflect-metadata'` itself; the production build bundles its own copy of inversify.

type ReflectObject = typeof Reflect;

let shadow: ReflectObject | undefined;
let loading: ReflectObject | undefined;

/** Called (once) just before inversify's modules evaluate: see inversify.ts. */
export function beginInversifyLoad(): void {
  loading = globalThis.Reflect;
  shadow = Object.create(loading) as ReflectObject;
  globalThis.Reflect = shadow;
}

/** Called (once) just after inversify's modules evaluated: puts the host's Reflect back. */
export function endInversifyLoad(): void {
  if (loading) globalThis.Reflect = loading;
  loading = undefined;
}

/** Runs synchronous container work (bind, get) with the polyfilled Reflect in place. */
export function withContainerReflect<T>(work: () => T): T {
  const host = globalThis.Reflect;
  // Loaded without the guard (a test importing inversify first): the polyfill is on the host's.
  const mine = shadow ?? host;
  if (mine === host) return work();
  globalThis.Reflect = mine;
  try {
    return work();
  } finally {
    globalThis.Reflect = host;
  }
}
