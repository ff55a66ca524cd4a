#!/usr/bin/env node
// The installed `tranquil` command: TypeScript sources run through tsx (no build step),
// which also lets users' tranquil.config.ts and workflow files load as they are.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
