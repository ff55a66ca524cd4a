// Describes a workflow file from inside a Deno child that has no permission at all: prints
// one JSON line (name, triggers, step defaults, permission declaration) and exits. The engine
// never imports a workflow file; this is how it learns what the file is.
import * as z from 'zod';
import { isWorkflowDefinition } from '../sdk/workflow.ts';

/** A webhook's `validate` as data: a zod schema crosses as its JSON Schema (the engine checks
 *  request bodies with it, defaults included); a function cannot leave the file, so a file
 *  with one is refused rather than served with no check at all. */
function webhookTrigger(t: { type: string; path?: string; validate?: unknown }): unknown {
  if (t.type !== 'webhook' || t.validate === undefined) return t;
  const path = t.path ?? '';
  if (typeof t.validate !== 'object' || t.validate === null || !('_zod' in t.validate)) {
    console.error(`tranquil runner: webhook '${path}': in a workflow file, validate must be a zod schema (a function cannot run outside the file's child)`);
    Deno.exit(2);
  }
  try {
    return { type: 'webhook', path, validateSchema: z.toJSONSchema(t.validate as z.ZodType, { io: 'input' }) };
  } catch (err) {
    console.error(`tranquil runner: webhook '${path}': its validate schema has no JSON Schema form: ${(err as Error).message}`);
    Deno.exit(2);
  }
}

export function describeModule(mod: { default?: unknown }): void {
  const def = mod.default;
  if (!isWorkflowDefinition(def)) {
    console.error('tranquil runner: the workflow file has no default export made by workflow()');
    Deno.exit(2);
  }
  const triggers = def.triggers.map((t) => webhookTrigger(t as { type: string }));
  console.log(JSON.stringify({ name: def.name, triggers, stepDefaults: def.stepDefaults, permissions: def.permissions ?? {} }));
}
