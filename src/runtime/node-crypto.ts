// node:crypto, loaded on first use. A static import loads node's whole crypto module graph
// (~20 internal modules, OpenSSL tables: ~0.8 MiB of RSS) into every engine at import, where
// an engine without webhooks, workflow files, plain workflows or an encryption keyring never
// needs it (idle RSS, issue 17). Synchronous (createRequire), so callers stay synchronous.
import { createRequire } from 'node:module';

let loaded: typeof import('node:crypto') | undefined;

export function nodeCrypto(): typeof import('node:crypto') {
  return (loaded ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'));
}
