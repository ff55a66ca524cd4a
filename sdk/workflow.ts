// workflow(name, builder): collects triggers and the run function into a frozen,
// validated definition object that any backend can execute.
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { permissionsSchema, type Permissions } from '../src/domain/permission-declaration.ts';
import { normalizeStepOptions } from './step-options.ts';
import { triggerKey, type Trigger } from './triggers.ts';
import { isQueueDefinition, type QueueDefinition } from './queue.ts';
import type { StepOptions, WorkflowFn } from './types.ts';

export const WORKFLOW_BRAND = 'tranquil.workflow' as const;

export interface WorkflowDefinition<I = any, O = any> {
  readonly kind: typeof WORKFLOW_BRAND;
  readonly name: string;
  readonly triggers: readonly Trigger[];
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
  /** Queues its steps may name (`{ queue: 'llm' }`); a step may also pass a queue itself. */
  readonly queues?: readonly QueueDefinition[];
}

/** The optional second argument of workflow(name, options, build). */
export interface WorkflowOptions {
  permissions?: Permissions;
  /** The queues (sdk/queue.ts) its steps refer to by name. */
  queues?: QueueDefinition[];
}

export interface WorkflowBuilder<I = any, O = any> {
  trigger(t: Trigger): void;
  run(fn: WorkflowFn<I, O>): void;
  /** Default step options, e.g. { retries: { limit: 5, delay: '10s' }, timeout: '30s' }. */
  defaults(options: StepOptions): void;
}

export const workflowNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(120)
  .regex(/^[A-Za-z][A-Za-z0-9_\-]*$/, 'must start with a letter and use letters, digits, _ or -');

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
  let queues: readonly QueueDefinition[] | undefined;
  if (typeof optionsOrBuild !== 'function') {
    if (typeof optionsOrBuild !== 'object' || optionsOrBuild === null) throw new ValidationError(`workflow '${name}': second argument must be an options object or a builder function`);
    const queueList = z.array(z.custom<QueueDefinition>((v) => isQueueDefinition(v), { error: "expected queue('name', {...}) values" }));
    const opts = parseOrThrow(z.object({ permissions: permissionsSchema().optional(), queues: queueList.optional() }).strict(), optionsOrBuild, `workflow '${name}' options`);
    permissions = opts.permissions && deepFreeze(opts.permissions);
    if (opts.queues) queues = Object.freeze(uniqueQueues(name, opts.queues));
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
  return Object.freeze({ kind: WORKFLOW_BRAND, name, triggers: Object.freeze(triggers), fn, stepDefaults, ...(permissions ? { permissions } : {}), ...(queues ? { queues } : {}) });
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

export function isWorkflowDefinition(v: unknown): v is WorkflowDefinition {
  try {
    return typeof v === 'object' && v !== null && (v as WorkflowDefinition).kind === WORKFLOW_BRAND;
  } catch {
    return false; // a proxy or getter that throws is not a definition
  }
}
