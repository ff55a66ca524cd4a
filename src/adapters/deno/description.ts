// What describing a workflow file gives (runner/describe.ts prints it, one JSON line): its
// zod check, and how it becomes the registry's FileDescription (triggers rebuilt, the file's
// schemas as schemas its check child runs: schema-checks.ts).
import * as z from 'zod';
import { ValidationError } from '../../domain/errors.ts';
import { permissionsSchema } from '../../domain/permissions.ts';
import type { CatchUpPolicy } from '../../domain/schedule.ts';
import type { FileDescription } from '../../runtime/registry.ts';
import type { StandardSchemaV1 } from '../../../sdk/standard-schema.ts';
import { schedule, type Trigger } from '../../../sdk/triggers.ts';
import { queue, type QueueDefinition, type QueueOptions } from '../../../sdk/queue.ts';
import { runOptionsSchema, type RunOptions } from '../../../sdk/run-flow.ts';
import { fromInput, inputPathSchema } from '../../../sdk/from-input.ts';
import { debounceSchema, debounceSpec, type DebounceSpec } from '../../../sdk/debounce.ts';
import { parseOrThrow } from '../../domain/validate.ts';
import { workflowNameSchema, type WorkflowSchemas } from '../../../sdk/workflow.ts';
import type { CheckAt } from './schema-checks.ts';

/** The description of a snapshot's file, stored next to it. */
export const DESCRIPTION = 'description.json';

/** A key or priority read from the input (`fromInput(path)` in the file), made again here. */
const fromInputData = z.object({ fromInput: inputPathSchema }).strict();

export const descriptionSchema = z.object({
  name: workflowNameSchema,
  triggers: z.array(z.object({ type: z.string() }).passthrough()),
  stepDefaults: z.object({}).passthrough(),
  permissions: permissionsSchema(),
  /** Which of the workflow's own schemas the file declares (absent: described before they were). */
  schemas: z.object({ input: z.boolean(), output: z.boolean(), signals: z.array(z.string()) }).optional(),
  /** The workflow's run timeout (`workflow(name, { timeout })`, docs/control.md), ms; null:
   *  none. Absent: described before timeouts were (the description is made again). */
  timeoutMs: z.number().int().positive().nullable().optional(),
  /** The queues the file declares (`workflow(name, { queues })`), as queue() took them; made
   *  again here with queue(). Absent: described before queues were (made again). */
  queues: z.array(z.object({ name: z.string(), options: z.object({}).passthrough() })).max(100).optional(),
  /** Run-level flow control as data: keys and priority only as input paths (fromInput();
   *  other functions are refused at describe). */
  runs: z.object({
    queue: z.object({ name: z.string(), options: z.object({}).passthrough() }).optional(),
    key: fromInputData.optional(),
    priority: fromInputData.optional(),
    singleton: z.object({ mode: z.string(), key: fromInputData.optional() }).strict().optional(),
    rateLimit: z.object({ limit: z.unknown(), period: z.unknown(), key: fromInputData.optional() }).strict().optional(),
  }).strict().optional(),
  /** Run-level debounce as data: ms, and the key as an input path (fromInput()). */
  debounce: z.object({ periodMs: z.number().int().positive(), maxWaitMs: z.number().int().positive().optional(), key: fromInputData.optional() }).strict().optional(),
});

export type Description = z.infer<typeof descriptionSchema>;

/** The schema `at` (`name`: the signal's, event's or webhook path's) of one file version. */
export type RemoteSchemas = (at: CheckAt, name?: string) => StandardSchemaV1;

/** What the registry keeps of a description: the webhook validators rebuilt, and each
 *  declared schema (input, signals, event payloads) as one its check child runs. The
 *  output schema is run by the run child itself (runner/child.ts). */
export function fileDescription(d: Description, digest: string, file: string, remote: RemoteSchemas): FileDescription {
  const triggers = withValidators(d.triggers, file).map((t) => {
    if (t.type === 'event' && (t as { schema?: unknown }).schema === true) return { ...t, schema: remote('event', t.name) };
    // The webhook's validate, run by the check child; its JSON Schema kept to be shown.
    if (t.type === 'webhook' && (t as { validateInFile?: unknown }).validateInFile === true) {
      const { validateInFile: _, ...rest } = t as Trigger & { validateInFile?: boolean };
      return { ...rest, validate: remote('webhook', t.path) } as Trigger;
    }
    return t;
  });
  const s = d.schemas;
  const schemas: WorkflowSchemas | undefined = s && (s.input || s.signals.length > 0)
    ? { ...(s.input ? { input: remote('input') } : {}), ...(s.signals.length > 0 ? { signals: Object.fromEntries(s.signals.map((n) => [n, remote('signal', n)])) } : {}) }
    : undefined;
  const queues = declaredQueues(d, file);
  const runs = declaredRuns(d, file);
  const debounce = declaredDebounce(d, file);
  return {
    ...(runs ? { runs } : {}), ...(debounce ? { debounce } : {}),
    name: d.name, triggers, stepDefaults: d.stepDefaults, file: { path: file, digest, permissions: d.permissions }, ...(queues.length > 0 ? { queues } : {}),
    ...(schemas ? { schemas } : {}), ...(d.timeoutMs != null ? { timeoutMs: d.timeoutMs } : {}),
  };
}

/** The file's queues, each made again by queue() in this process (a bad name or limit
 *  fails the describe in one line naming the file and the queue). */
export function declaredQueues(d: Pick<Description, 'queues'>, file: string): QueueDefinition[] {
  try {
    return (d.queues ?? []).map((q) => queue(q.name, q.options as QueueOptions));
  } catch (err) {
    throw new ValidationError(`workflow file ${file}: ${(err as Error).message}`);
  }
}

/** The file's `runs` (data only) as the sdk's RunOptions, checked by the sdk's own schema
 *  (a limit of 0, a bad mode, nothing in it: one line naming the file and the field). */
export function declaredRuns(d: Pick<Description, 'runs' | 'name'>, file: string): RunOptions | undefined {
  const r = d.runs;
  if (!r) return undefined;
  try {
    const fn = (k: { fromInput: string } | undefined) => (k ? fromInput(k.fromInput) : undefined);
    const opts = {
      ...(r.queue ? { queue: queue(r.queue.name, r.queue.options as QueueOptions) } : {}),
      ...(r.key ? { key: fn(r.key) } : {}),
      ...(r.priority ? { priority: fromInput<number>(r.priority.fromInput) } : {}),
      ...(r.singleton ? { singleton: { mode: r.singleton.mode, ...(r.singleton.key ? { key: fn(r.singleton.key) } : {}) } } : {}),
      ...(r.rateLimit ? { rateLimit: { limit: r.rateLimit.limit, period: r.rateLimit.period, ...(r.rateLimit.key ? { key: fn(r.rateLimit.key) } : {}) } } : {}),
    };
    return Object.freeze(parseOrThrow(runOptionsSchema, opts, `workflow '${d.name}' options.runs`) as RunOptions);
  } catch (err) {
    throw new ValidationError(`workflow file ${file}: ${(err as Error).message}`);
  }
}

/** The file's `debounce` made again by the sdk's own checks (maxWait under the period, a bad
 *  path: one line naming the file and the field). */
export function declaredDebounce(d: Pick<Description, 'debounce' | 'name'>, file: string): DebounceSpec | undefined {
  const o = d.debounce;
  if (!o) return undefined;
  try {
    const opts = parseOrThrow(debounceSchema, { period: o.periodMs, ...(o.maxWaitMs !== undefined ? { maxWait: o.maxWaitMs } : {}), ...(o.key ? { key: fromInput(o.key.fromInput) } : {}) }, `workflow '${d.name}' options.debounce`);
    return debounceSpec(d.name, opts);
  } catch (err) {
    throw new ValidationError(`workflow file ${file}: ${(err as Error).message}`);
  }
}

/** The child could not check a schedule's cron (no read access to cron-parser): rebuilt
 *  here with the sdk's own constructor, which validates it (a bad one fails the describe). */
export function checkTriggers<D extends { triggers: { type: string }[] }>(d: D, file: string): D {
  try {
    const triggers = d.triggers.map((t) => {
      if (t.type !== 'schedule') return t;
      const s = t as { cron?: unknown; timezone?: unknown; catchUp?: unknown };
      return schedule(String(s.cron), { ...(s.timezone != null ? { timezone: s.timezone as string } : {}), ...(s.catchUp != null ? { catchUp: s.catchUp as CatchUpPolicy } : {}) });
    });
    return { ...d, triggers };
  } catch (err) {
    throw new ValidationError(`workflow file ${file}: ${(err as Error).message}`);
  }
}

/** A webhook trigger described with only `validateSchema` (its zod schema as JSON Schema: a
 *  description by an engine from before the check child) gets its validator back as a zod
 *  schema built from it; one with `validateInFile` keeps the JSON Schema only to be shown. */
function withValidators(triggers: { type: string }[], file: string): Trigger[] {
  return triggers.map((t) => {
    const w = t as { type: string; path?: string; validateSchema?: unknown; validateInFile?: boolean };
    if (w.type !== 'webhook' || w.validateSchema === undefined || w.validateInFile) return t as unknown as Trigger;
    try {
      return { type: 'webhook', path: String(w.path), validate: z.fromJSONSchema(w.validateSchema as Parameters<typeof z.fromJSONSchema>[0]) } as Trigger;
    } catch (err) {
      throw new ValidationError(`workflow file ${file}: webhook '${String(w.path)}': its validate schema: ${(err as Error).message}`);
    }
  });
}
