// once(build): a value built on its first use and kept from then on. The engine's zod schemas
// are built this way rather than at module load: a zod 4 schema is a few KiB of heap (its
// internals, checks, shapes and closures), and an engine that never takes an API path never
// pays for that path's schemas (docs/performance.md, "Idle memory").
export function once<T>(build: () => T): () => T {
  let built = false;
  let value: T;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value;
  };
}
