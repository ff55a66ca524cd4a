// Module hook for running from a checkout (bin/tranquil.mjs): adds the "tranquil-source" export
// condition, so @tranquil/engine and @tranquil/sdk resolve to the TypeScript sources the CLI
// itself runs from (one copy of the engine per process), not to a dist/ that may be stale.
export async function resolve(specifier, context, next) {
  return next(specifier, { ...context, conditions: [...context.conditions, 'tranquil-source'] });
}
