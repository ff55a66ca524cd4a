// The Standard Schemas a definition declares, checked where a value enters the engine
// (docs/values.md, Schemas): a run's input at trigger/webhook time, an event's payload at emit
// time (each subscriber's event() schema and its input schema), a signal's payload at
// engine.signal. A value that fails is refused in one line naming the workflow, the field and
// the rule, before anything is stored. A workflow file's schemas live in its Deno child and
// are not checked here (docs/values.md says so).
import type { Json } from '../domain/json.ts';
import { decodeValue } from '../domain/value-codec.ts';
import type { Trigger } from '../../sdk/triggers.ts';
import { isSchemaRefusal, isSchemaUnanswered, validateWith, type StandardSchemaV1 } from '../../sdk/standard-schema.ts';
import { ValidationError } from '../domain/errors.ts';
import { debounceKeyOf } from '../../sdk/debounce.ts';
import type { WorkflowFn } from '../../sdk/types.ts';
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import type { WorkflowRegistry } from './registry.ts';
import type { EmitCheck } from './emit-check.ts';

/** The input a run of `name` starts with: parsed by its input schema when it has one. */
// Both checks answer `{ value }`, never the value itself: an async function that returns an
// object with a `then` (or a Proxy whose traps throw) has it adopted as a promise, so a
// thenable input became its resolution and a throwing Proxy escaped as a raw error.
export async function checkedInput(registry: WorkflowRegistry, name: string, input: unknown): Promise<{ value: unknown }> {
  const schema = registry.get(name).definition.schemas?.input;
  return { value: schema ? await validateWith(schema, input, `workflow '${name}' input`) : input };
}

/** Refuses a payload that some subscriber of `event` would refuse (its event() schema, then
 *  its input schema). The payload is stored as given: subscribers share one event. */
export async function checkEventPayload(registry: WorkflowRegistry, event: string, payload: unknown): Promise<void> {
  for (const w of registry.all()) {
    const d = w.definition;
    const t = d.triggers.find((x: Trigger) => x.type === 'event' && x.name === event) as Extract<Trigger, { type: 'event' }> | undefined;
    if (!t) continue;
    if (t.schema) await validateWith(t.schema, payload, `event '${event}' payload for workflow '${d.name}'`);
    if (d.schemas?.input) await validateWith(d.schemas.input, payload, `event '${event}' payload for workflow '${d.name}' input`);
    // A debounced subscriber's burst key, refused here with nothing stored (a key found bad
    // inside the publish's write could only drop the trigger).
    if (d.debounce) debounceKeyOf(d.name, d.debounce, payload);
  }
}

/** A ctx.emit payload some subscriber's schema refuses: the refusal (the same one-line
 *  error engine.emit throws), or undefined. A schema whose code throws refuses too (in one
 *  line naming the event: it would throw again on every try); one that could not be asked
 *  (a file's check child that crashed or timed out) throws: that is no verdict on the payload. */
export async function emitRefusal(registry: WorkflowRegistry, event: string, stored: Json): Promise<Error | undefined> {
  // Decoded only when some subscriber declares a schema (most events: none).
  if (!checksEvents(registry, event)) return undefined;
  try {
    await checkEventPayload(registry, event, decodeValue(stored));
    return undefined;
  } catch (err) {
    if (isSchemaUnanswered(err)) throw err;
    // A refusal, or a debounced subscriber's key function refusing the payload (one line).
    if (isSchemaRefusal(err) || err instanceof ValidationError) return err as Error;
    return new ValidationError(`event '${event}' payload: a schema threw: ${String((err as Error)?.message ?? err).replace(/\s*\n\s*/g, ' ')}`);
  }
}

/** True when some subscriber of `event` (any event when absent) declares a payload or input schema. */
function checksEvents(registry: WorkflowRegistry, event?: string): boolean {
  return registry.all().some((w) => w.definition.triggers.some((t: Trigger) => t.type === 'event' && (event === undefined || t.name === event) && (t.schema !== undefined || w.definition.schemas?.input !== undefined || w.definition.debounce?.key !== undefined)));
}

/** The ctx.emit check of an executor's sessions (emit-check.ts), on this registry. */
export function emitCheckOf(registry: WorkflowRegistry): EmitCheck {
  return { wanted: () => checksEvents(registry), refusal: (event, stored) => emitRefusal(registry, event, stored) };
}

/** True when some registered workflow declares signal schemas (engine.signal then reads the
 *  run's workflow; otherwise it never pays for that read). */
export function anySignalSchemas(registry: WorkflowRegistry): boolean {
  return registry.all().some((w) => w.definition.schemas?.signals !== undefined);
}

/** The payload a signal of `name` to a run of `workflow` carries: parsed by the declared
 *  schema when there is one, else as given. */
export async function checkedSignal(registry: WorkflowRegistry, workflow: string, runId: string, name: string, payload: unknown): Promise<{ value: unknown }> {
  let schema: StandardSchemaV1 | undefined;
  try {
    schema = registry.get(workflow).definition.schemas?.signals?.[name];
  } catch {
    return { value: payload }; // a run of a workflow no longer registered: nothing declared here
  }
  return { value: schema ? await validateWith(schema, payload, `signal '${name}' to run ${runId} (workflow '${workflow}')`) : payload };
}

/** The run function with the output schema applied: an output that fails fails the run. */
export function withOutputSchema(d: WorkflowDefinition, fn: WorkflowFn): WorkflowFn {
  const schema = d.schemas?.output;
  if (!schema) return fn;
  return async (args) => validateWith(schema, await fn(args), `workflow '${d.name}' output`);
}
