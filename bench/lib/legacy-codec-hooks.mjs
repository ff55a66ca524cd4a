// Module hooks (node:module register) of the bench's "today's encoding" child: every import
// of src/domain/value-codec.ts resolves to bench/lib/legacy-value-codec.ts instead.
const SHIM = new URL('./legacy-value-codec.ts', import.meta.url).href;

export async function resolve(specifier, context, next) {
  // Resolved by the next hooks (tsx), so the shim loads as TypeScript like the module it replaces.
  if (specifier.endsWith("/value-codec.ts") && context.parentURL !== SHIM) return next(SHIM, context);
  return next(specifier, context);
}
