// workflow(name, builder): collects triggers and the run function into a frozen,
// validated definition object that any backend can execute.
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { parseDuration, type Duration } from '../src/domain/duration.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { once } from '../src/domain/once.ts';
import { permissionsSchema, type Permissions } from '../src/domain/permission-declaration.ts';
import { normalizeStepOptions } from './step-options.ts';
import { triggerKey, type Trigger } from './triggers.ts';
import { isQueueDefinition, type QueueDefinition } from './queue.ts';
import { runOptionsSchema, type RunOptions } from './run-flow.ts';
import { debounceSchema, debounceSpec, type DebounceOptions, type DebounceSpec } from './debounce.ts';
import type { StepOptions, WorkflowFn } from './types.ts';
import { isStandardSchema, type InferOutput, type StandardSchemaV1 } from './standard-schema.ts';

export const WORKFLOW_BRAND = 'tranquil.workflow' as const;

/** A workflow as `workflow(name, build)` returns it: frozen and validated, ready to pass to
 *  `createEngine({ workflows })` (or to export from a workflow file). */
export interface WorkflowDefinition<I = any, O = any> {
  /** The brand isWorkflowDefinition checks. */
  readonly kind: typeof WORKFLOW_BRAND;
  /** The workflow's name: unique in one engine; runs and triggers refer to it. */
  readonly name: string;
  /** What starts its runs (w.trigger); none: only engine.trigger does. */
  readonly triggers: readonly Trigger[];
  /** The run function (w.run). */
  readonly fn: WorkflowFn<I, O>;
  /** Step options every step.do of this workflow starts from (its own options win). */
  readonly stepDefaults: StepOptions;
  /** What a workflow file may do in its Deno child (docs/runner.md); absent: nothing beyond
   *  talking to the engine. In-process workflows are trusted code and ignore it. */
  readonly permissions?: Permissions;
  /** The version runs record (default: a digest of the source). Set by definitions that
   *  carry their own version, such as plain-data workflows (docs/plain-workflows.md). */
  readonly version?: string;
  /** The run function for a run recorded at `version` (a run stays on the definition it
   *  started with); absent: `fn` runs every version. */
  readonly forVersion?: (version: string) => WorkflowFn<I, O>;
  /** Standard Schemas checked at the boundaries (docs/values.md, Schemas): `input` at
   *  trigger/emit/webhook time, `signals[name]` when engine.signal sends one, `output` when
   *  the run returns. Absent: nothing checked. */
  readonly schemas?: WorkflowSchemas;
  /** The run timeout (ms, option `timeout`): a run not finished this long after it was
   *  created fails with TimeoutError, its cleanup run as after a cancel (docs/control.md). */
  readonly timeoutMs?: number;
  /** Queues its steps may name (`{ queue: 'llm' }`); a step may also pass a queue itself. */
  readonly queues?: readonly QueueDefinition[];
  /** Run-level flow control (docs/flow-control.md): each run holds a slot of `queue`; one
   *  unfinished run per key (`singleton`); starts over a rate dropped (`rateLimit`). */
  readonly runs?: RunOptions<I>;
  /** Run-level debounce (docs/flow-control.md, Debounce): a burst of triggers per key becomes one run. */
  readonly debounce?: DebounceSpec<I>;
}

/** The schemas a definition checks at its boundaries (workflow()'s `input`, `output` and
 *  `signals` options). */
export interface WorkflowSchemas {
  readonly input?: StandardSchemaV1;
  readonly output?: StandardSchemaV1;
  readonly signals?: Readonly<Record<string, StandardSchemaV1>>;
}

/** The optional second argument of workflow(name, options, build). */
export interface WorkflowOptions {
  permissions?: Permissions;
  /** The run's input (Standard Schema: zod 4, valibot, arktype): input that fails is refused
   *  at trigger/emit/webhook time with nothing stored; the run function gets the parsed value,
   *  typed by it. */
  input?: StandardSchemaV1;
  /** What the run returns: an output that fails fails the run (ValidationError). */
  output?: StandardSchemaV1;
  /** Payload schema per signal (waitForEvent) name: engine.signal refuses a payload that
   *  fails it, and the wait goes on waiting. */
  signals?: Record<string, StandardSchemaV1>;
  /** Deadline of each run, counted from its creation ('1h', or ms); a trigger may override it
   *  (engine.trigger option `timeout`). Past it the run fails with TimeoutError after the
   *  cleanup its code does on the error, as after a cancel (docs/control.md). */
  timeout?: Duration;
  /** The queues (sdk/queue.ts) its steps refer to by name. */
  queues?: QueueDefinition[];
  /** Run-level flow control: `{ queue, key? }`, each run holds a slot of `queue` (per
   *  `key(input)`) from its start to its end; a run over the limit waits, pending, in line.
   *  `singleton: { key?, mode: 'skip' | 'cancel' }`: one unfinished run per key.
   *  `rateLimit: { limit, period, key? }`: starts over the limit are skipped (sdk/run-flow.ts). */
  runs?: RunOptions;
  /** `{ period, key?, maxWait? }`: a burst of triggers with one key becomes one run with the
   *  last input, started `period` after the last trigger, at most `maxWait` after the first. */
  debounce?: DebounceOptions;
}

/** The `w` that workflow(name, (w) => ...) hands its build function. */
export interface WorkflowBuilder<I = any, O = any> {
  /** Adds a trigger (manual(), event(), schedule(), webhook()); the same one twice throws
   *  ValidationError. engine.trigger starts a run of any workflow, triggers or not. */
  trigger(t: Trigger): void;
  /** Sets the run function; required, and only once (ValidationError otherwise). */
  run(fn: WorkflowFn<I, O>): void;
  /** Default step options, e.g. { retries: { limit: 5, delay: '10s' }, timeout: '30s' }. */
  defaults(options: StepOptions): void;
}

export const workflowNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(120)
  .regex(/^[A-Za-z][A-Za-z0-9_\-]*$/, 'must start with a letter and use letters, digits, _ or -');

/** Built once, on first use (a zod schema is costly to construct). */
const optionsSchema = once(() => {
  const schema = z.custom<StandardSchemaV1>(isStandardSchema, 'expected a Standard Schema (zod 4, valibot, arktype: an object with ~standard)');
  return z.object({ permissions: permissionsSchema().optional(), input: schema.optional(), output: schema.optional(), signals: z.record(z.string().min(1), schema).optional(), timeout: z.union([z.number(), z.string()]).optional(), queues: z.array(z.custom<QueueDefinition>((v) => isQueueDefinition(v), { error: "expected queue('name', {...}) values" })).optional(), runs: runOptionsSchema.optional(), debounce: debounceSchema.optional() }).strict();
});

/**
 * Defines a workflow: `build` declares its triggers (`w.trigger`), default step options
 * (`w.defaults`) and run function (`w.run`). The optional `options` add Standard Schemas for
 * the input, output and signals (which also type `input`) and a workflow file's permissions.
 *
 * @param name letters, digits, `_` and `-`, starting with a letter (at most 120).
 * @throws ValidationError on a bad name, options or trigger, or a missing run function.
 * @example
 * ```ts
 * const hello = workflow('hello', (w) => {
 *   w.trigger(event('user.signed_up'));
 *   w.run(async ({ input, step }) => step.do('greet', () => `hello ${input.name}`));
 * });
 * ```
 */
export function workflow<S extends StandardSchemaV1, SO extends StandardSchemaV1>(name: string, options: WorkflowOptions & { input: S; output: SO }, build: (w: WorkflowBuilder<InferOutput<S>, InferOutput<SO>>) => void): WorkflowDefinition<InferOutput<S>, InferOutput<SO>>;
export function workflow<S extends StandardSchemaV1, O = any>(name: string, options: WorkflowOptions & { input: S }, build: (w: WorkflowBuilder<InferOutput<S>, O>) => void): WorkflowDefinition<InferOutput<S>, O>;
export function workflow<I = any, O = any>(name: string, build: (w: WorkflowBuilder<I, O>) => void): WorkflowDefinition<I, O>;
export function workflow<I = any, O = any>(name: string, options: WorkflowOptions, build: (w: WorkflowBuilder<I, O>) => void): WorkflowDefinition<I, O>;
export function workflow<I = any, O = any>(
  name: string,
  optionsOrBuild: WorkflowOptions | ((w: WorkflowBuilder<I, O>) => void),
  maybeBuild?: (w: WorkflowBuilder<I, O>) => void,
): WorkflowDefinition<I, O> {
  parseOrThrow(workflowNameSchema, typeof name === 'string' ? name : undefined, 'workflow name', { path: 'omit' });
  const build = typeof optionsOrBuild === 'function' ? optionsOrBuild : maybeBuild;
  let permissions: Permissions | undefined;
  let schemas: WorkflowSchemas | undefined;
  let timeoutMs: number | undefined;
  let queues: readonly QueueDefinition[] | undefined;
  let runs: RunOptions | undefined;
  let debounce: DebounceSpec | undefined;
  if (typeof optionsOrBuild !== 'function') {
    if (typeof optionsOrBuild !== 'object' || optionsOrBuild === null) throw new ValidationError(`workflow '${name}': second argument must be an options object or a builder function`);
    const opts = parseOrThrow(optionsSchema(), optionsOrBuild, `workflow '${name}' options`);
    permissions = opts.permissions && deepFreeze(opts.permissions);
    if (opts.timeout !== undefined) timeoutMs = runTimeoutMs(opts.timeout, `workflow '${name}' option timeout`);
    if (opts.input || opts.output || opts.signals) {
      schemas = Object.freeze({ input: opts.input, output: opts.output, signals: opts.signals && Object.freeze({ ...opts.signals }) });
    }
    if (opts.queues) queues = Object.freeze(uniqueQueues(name, opts.queues));
    if (opts.runs) runs = Object.freeze({ ...opts.runs });
    if (opts.debounce) debounce = debounceSpec(name, opts.debounce);
  }
  if (typeof build !== 'function') throw new ValidationError(`workflow '${name}': second argument must be a builder function`);
  const triggers: Trigger[] = [];
  const keys = new Set<string>();
  let fn: WorkflowFn<I, O> | undefined;
  let stepDefaults: StepOptions = {};
  build({
    trigger(t) {
      if (!t || typeof t !== 'object' || typeof readType(t) !== 'string') {
        throw new ValidationError(`workflow '${name}' trigger: use manual(), event(), schedule() or webhook()`);
      }
      const key = triggerKey(t);
      if (keys.has(key)) throw new ValidationError(`workflow '${name}' trigger: duplicate ${key}`);
      keys.add(key);
      triggers.push(t);
    },
    run(f) {
      if (typeof f !== 'function') throw new ValidationError(`workflow '${name}' run: expected a function`);
      if (fn) throw new ValidationError(`workflow '${name}' run: declared twice`);
      fn = f;
    },
    defaults(options) {
      if (typeof options !== 'object' || options === null) throw new ValidationError(`workflow '${name}' defaults: expected an options object`);
      normalizeStepOptions(`(defaults of workflow '${name}')`, options); // throws naming the field
      stepDefaults = Object.freeze({ ...options, retries: options.retries && Object.freeze({ ...options.retries }) });
    },
  });
  if (!fn) throw new ValidationError(`workflow '${name}' run: missing (call w.run(fn))`);
  return Object.freeze({ kind: WORKFLOW_BRAND, name, triggers: Object.freeze(triggers), fn, stepDefaults, ...(permissions ? { permissions } : {}), ...(schemas ? { schemas } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(queues ? { queues } : {}), ...(runs ? { runs } : {}), ...(debounce ? { debounce } : {}) });
}

/** A run timeout: a positive duration within the limit, or a one-line ValidationError. */
export function runTimeoutMs(d: Duration, what: string): number {
  let ms: number;
  try {
    ms = parseDuration(d, what);
  } catch (err) {
    throw new ValidationError((err as Error).message);
  }
  if (!(ms > 0)) throw new ValidationError(`${what}: must be a positive duration, got ${JSON.stringify(d)}`);
  return ms;
}

function uniqueQueues(workflowName: string, list: QueueDefinition[]): QueueDefinition[] {
  const seen = new Set<string>();
  for (const q of list) {
    if (seen.has(q.name)) throw new ValidationError(`workflow '${workflowName}' options.queues: queue '${q.name}' listed twice`);
    seen.add(q.name);
  }
  return [...list];
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) Object.freeze(v);
  return Object.freeze(o);
}

/** A trigger's `type`, or undefined when reading it throws (a proxy, a getter). */
function readType(t: object): unknown {
  try {
    return (t as Trigger).type;
  } catch {
    return undefined;
  }
}

/** Whether `v` is a definition made by workflow() (or plainWorkflow()); never throws. */
export function isWorkflowDefinition(v: unknown): v is WorkflowDefinition {
  try {
    return typeof v === 'object' && v !== null && (v as WorkflowDefinition).kind === WORKFLOW_BRAND;
  } catch {
    return false; // a proxy or getter that throws is not a definition
  }
}
