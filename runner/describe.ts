// Describes a workflow file from inside a Deno child that has no permission at all: prints
// one JSON line (name, triggers, step defaults, permission declaration, which boundary schemas
// it declares) and exits. The engine never imports a workflow file; this is how it learns what
// the file is. Started with the argument `check`, the same permissionless child instead checks
// values against the file's schemas, one JSON line in and one out (runner/schema-check.ts).
import * as z from 'zod';
import { isWorkflowDefinition } from '../sdk/workflow.ts';
import { isStandardSchema } from '../sdk/standard-schema.ts';
import { inputPathOf } from '../sdk/from-input.ts';
import { serveChecks } from './schema-check.ts';

/** A webhook's `validate`: a Standard Schema (zod, valibot, ...) stays in the file and is run
 *  by its check child (`validateInFile`), like the workflow's other schemas; a zod schema also
 *  crosses as its JSON Schema, only to be shown (`tranquil workflows validate`). A function is
 *  refused: the file would be served with no check at all. An event trigger's payload schema
 *  crosses as `schema: true`: the check child runs it too (serveChecks). */
function trigger(t: { type: string; path?: string; validate?: unknown; schema?: unknown }): unknown {
  if (t.type === 'event' && t.schema !== undefined) return { ...t, schema: true };
  if (t.type !== 'webhook' || t.validate === undefined) return t;
  const path = t.path ?? '';
  if (!isStandardSchema(t.validate)) {
    console.error(`tranquil runner: webhook '${path}': in a workflow file, validate must be a zod schema or another Standard Schema (a function cannot run outside the file's child)`);
    Deno.exit(2);
  }
  let shown: unknown;
  try {
    if ('_zod' in t.validate) shown = z.toJSONSchema(t.validate as unknown as z.ZodType, { io: 'input' });
  } catch {
    shown = undefined; // no JSON Schema form: nothing to show, the check child still runs it
  }
  return { type: 'webhook', path, validateInFile: true, ...(shown !== undefined ? { validateSchema: shown } : {}) };
}

export async function describeModule(mod: { default?: unknown }): Promise<void> {
  const def = mod.default;
  if (!isWorkflowDefinition(def)) {
    console.error('tranquil runner: the workflow file has no default export made by workflow()');
    Deno.exit(2);
  }
  if (Deno.args[0] === 'check') return serveChecks(def);
  // Run-level flow control crosses as data (a queue, a singleton mode, a rate limit, a
  // debounce, keys and a priority made by fromInput()); other key and priority functions are code the engine
  // would have to run: refused rather than ignored (docs/flow-control.md, In workflow files).
  const refuse = (what: string) => {
    console.error(`tranquil runner: workflow '${def.name}' options.${what}: a workflow file's key and priority are read from the input with fromInput('path') (a function cannot run outside the file's child)`);
    Deno.exit(2);
  };
  const path = (what: string, f: unknown) => {
    if (f === undefined) return {};
    const p = inputPathOf(f);
    if (p === undefined) refuse(what);
    return { [what.split('.').at(-1)!]: { fromInput: p } };
  };
  // A debounce crosses as its ms and its key's path (made again by debounceSpec in the engine).
  const d = def.debounce;
  const debounce = d && { periodMs: d.periodMs, ...(d.maxWaitMs !== undefined ? { maxWaitMs: d.maxWaitMs } : {}), ...path('debounce.key', d.key) };
  const r = def.runs;
  const runs = r && {
    ...(r.queue ? { queue: { name: r.queue.name, options: r.queue.options } } : {}),
    ...path('runs.key', r.key),
    ...path('runs.priority', r.priority),
    ...(r.singleton ? { singleton: { mode: r.singleton.mode, ...path('runs.singleton.key', r.singleton.key) } } : {}),
    ...(r.rateLimit ? { rateLimit: { limit: r.rateLimit.limit, period: r.rateLimit.period, ...path('runs.rateLimit.key', r.rateLimit.key) } } : {}),
  };
  const triggers = def.triggers.map((t) => trigger(t as { type: string }));
  const s = def.schemas;
  // Which of the workflow's own schemas exist (the engine then checks its boundaries with them).
  const schemas = { input: s?.input !== undefined, output: s?.output !== undefined, signals: Object.keys(s?.signals ?? {}) };
  console.log(JSON.stringify({ name: def.name, triggers, stepDefaults: def.stepDefaults, permissions: def.permissions ?? {}, schemas, timeoutMs: def.timeoutMs ?? null,
    // The queues its steps may use, as queue() took them: the engine makes each again with
    // queue() (the same checks) and serves this file's slot asks only from these.
    queues: (def.queues ?? []).map((q) => ({ name: q.name, options: q.options })), ...(runs ? { runs } : {}), ...(debounce ? { debounce } : {}) }));
}
