// The runner token's name and size (docs/runner.md), apart from the frame schemas of
// runner-protocol.ts: the engine's permission flags need the env var's name at load, and the
// protocol's ~100 zod schemas should load only with the Deno runner (an engine without
// workflow files never builds them). runner-protocol.ts re-exports these.

/** The env var the runner's single-use token travels in (never argv, never a URL). Here, not
 *  in permissions.ts, so that the child does not load node:path with it. */
export const RUNNER_TOKEN_ENV = 'TRANQUIL_RUNNER_TOKEN';

export const TOKEN_BYTES = 32;
/** 64 hex digits and a newline. */
export const TOKEN_LINE_BYTES = TOKEN_BYTES * 2 + 1;
