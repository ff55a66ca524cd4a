// @tranquil/sdk as installed: the engine package's built sdk entry (dist/sdk.js), so a
// workflow's TimeoutError is the engine's TimeoutError (one copy of every class). Hand-written,
// not generated: the sdk has no build of its own. Install it next to @tranquil/engine.
export * from '@tranquil/engine/sdk';
