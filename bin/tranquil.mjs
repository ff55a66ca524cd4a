#!/usr/bin/env node
// The `tranquil` command. tsx is registered either way: users' tranquil.config.ts and workflow
// files load as they are. Installed from the package, it runs the built CLI (dist/cli.js, which
// shares its chunks with dist/index.js and dist/sdk.js: a config importing @tranquil/sdk gets
// the same classes as the CLI's engine). From a checkout (cli/main.ts present), it runs the
// sources, and the "tranquil-source" export condition makes @tranquil/* resolve to them too.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { register } from 'tsx/esm/api';

register();
// Registered after tsx, so it runs first: project files with import/export load as ESM in a
// package without "type": "module" (bin/project-esm.mjs).
registerHooks('./project-esm.mjs', import.meta.url);
const sources = new URL('../cli/main.ts', import.meta.url);
if (existsSync(sources)) {
  registerHooks('./source-conditions.mjs', import.meta.url);
  await import(sources.href);
} else {
  await import('../dist/cli.js');
}
