// The check child of a workflow file (runner/describe.ts started with `check`): the engine's
// boundaries (trigger, webhook, emit, signal) run the file's Standard Schemas here, in a child
// with no permission, since the schemas are code that lives in the file. One request per line
// on stdin, `{ id, at, name?, value }` (the value in the codec's stored form); one answer per
// line on stdout, prefixed CHECK_PREFIX (the file's own console output is not an answer):
// `{ id, value }` (the parsed value, stored form), `{ id, issues }` or `{ id, error }`.
import type { Json } from '../src/domain/json.ts';
import { decodeValue, encodeValue } from '../src/domain/value-codec.ts';
import { isStandardSchema, type StandardIssue, type StandardSchemaV1 } from '../sdk/standard-schema.ts';
import type { WorkflowDefinition } from '../sdk/workflow.ts';

export const CHECK_PREFIX = 'tranquil-check ';

interface Request {
  id: number;
  at: 'input' | 'output' | 'signal' | 'event' | 'webhook';
  name?: string;
  value: Json;
}

function schemaOf(def: WorkflowDefinition, r: Request): StandardSchemaV1 | undefined {
  if (r.at === 'input') return def.schemas?.input;
  if (r.at === 'output') return def.schemas?.output;
  if (r.at === 'signal') return r.name === undefined ? undefined : def.schemas?.signals?.[r.name];
  if (r.at === 'webhook') {
    const w = def.triggers.find((x) => x.type === 'webhook' && x.path === r.name);
    return w?.type === 'webhook' && isStandardSchema(w.validate) ? w.validate : undefined;
  }
  const t = def.triggers.find((x) => x.type === 'event' && x.name === r.name);
  return t?.type === 'event' ? t.schema : undefined;
}

/** Issues as data: a path element is a key (symbols as their description). */
function plainIssues(issues: ReadonlyArray<StandardIssue>): { message: string; path?: (string | number)[] }[] {
  return issues.map((i) => ({
    message: String(i.message),
    ...(i.path ? { path: i.path.map((p) => { const k = typeof p === 'object' && p !== null ? p.key : p; return typeof k === 'number' ? k : String(k); }) } : {}),
  }));
}

async function answer(def: WorkflowDefinition, line: string): Promise<Record<string, unknown>> {
  let r: Request;
  try {
    r = JSON.parse(line) as Request;
  } catch {
    return { id: -1, error: 'the check request is not JSON' };
  }
  try {
    const schema = schemaOf(def, r);
    if (!schema) return { id: r.id, error: `the file declares no ${r.at} schema${r.name ? ` '${r.name}'` : ''}` };
    const v = await schema['~standard'].validate(decodeValue(r.value));
    if (v.issues) return { id: r.id, issues: plainIssues(v.issues) };
    return { id: r.id, value: encodeValue(v.value, `the value parsed by the ${r.at} schema`).stored };
  } catch (err) {
    return { id: r.id, error: (err as Error)?.message ?? String(err) };
  }
}

/** Answers check requests until stdin ends (the engine closes it or kills the child). */
export async function serveChecks(def: WorkflowDefinition): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of Deno.stdin.readable) {
    buf += decoder.decode(chunk, { stream: true });
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim() !== '') console.log(CHECK_PREFIX + JSON.stringify(await answer(def, line)));
    }
  }
  Deno.exit(0);
}
