// Describes a workflow file from inside a Deno child that has no permission at all: prints
// one JSON line (name, triggers, step defaults, permission declaration) and exits. The engine
// never imports a workflow file; this is how it learns what the file is.
import { isWorkflowDefinition } from '../sdk/workflow.ts';

export function describeModule(mod: { default?: unknown }): void {
  const def = mod.default;
  if (!isWorkflowDefinition(def)) {
    console.error('tranquil runner: the workflow file has no default export made by workflow()');
    Deno.exit(2);
  }
  // Functions (a webhook's validate) do not cross: JSON drops them.
  console.log(JSON.stringify({ name: def.name, triggers: def.triggers, stepDefaults: def.stepDefaults, permissions: def.permissions ?? {} }));
}
