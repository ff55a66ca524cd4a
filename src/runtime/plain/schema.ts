// The shape of a plain-data workflow (docs/plain-workflows.md), as zod schemas. Every
// mapping is strict: an unknown key is an error naming the keys allowed there. Steps and
// triggers are told apart by which key they carry (`action` / `wait` / `condition`;
// `event` / `schedule` / `webhook` / `manual`), so an error speaks of that kind's fields.
import * as z from 'zod';
import { readDuration } from '../../domain/duration.ts';
import { workflowNameSchema } from '../../../sdk/workflow.ts';
import { BUILTIN_NAMES, CEL_RESERVED, celBuiltinName } from './expressions.ts';
import { once } from '../../domain/once.ts';

/** A strict mapping whose unknown-key error lists what is allowed. */
function strict<S extends z.ZodRawShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.object(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown key '${String(iss.keys[0])}' (allowed here: ${allowed})` : undefined),
  }).strict();
}

// The schemas are built on the first load of a plain workflow (once), not at import: an
// engine without plain workflows never holds them (~130 zod schemas; docs/performance.md, "Idle memory").
export const definitionSchema = once(buildDefinitionSchema);

function buildDefinitionSchema() {
  const durationSchema = z.unknown().transform((v, ctx) => {
    const ms = readDuration(v);
    if (typeof ms === 'string') ctx.addIssue({ code: 'custom', message: `bad duration: ${ms}` });
    else if (ms < 0) ctx.addIssue({ code: 'custom', message: `bad duration: ${String(v)} is negative` });
    return typeof ms === 'number' ? ms : 0;
  });

  const eventNameSchema = z
    .string({ error: 'expected an event name (a string)' })
    .min(1, 'must not be empty')
    .max(200, 'at most 200 characters')
    .regex(/^[A-Za-z0-9_.:\-/]+$/, 'letters, digits and _ . : - / only');

  const stepIdSchema = z
    .string({ error: 'expected a step id (a string)' })
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a step id starts with a letter or _ and has letters, digits and _ only (expressions name steps by id)')
    .max(100, 'at most 100 characters')
    .refine((id) => !CEL_RESERVED.has(id) && !celBuiltinName(id), { error: (iss) => `'${String(iss.input)}' is a reserved word of the expression language` })
    .refine((id) => !(BUILTIN_NAMES as readonly string[]).includes(id), { error: (iss) => `'${String(iss.input)}' is reserved (expressions use it for the run's ${String(iss.input)})` });

  const actionNameSchema = z
    .string({ error: 'expected an action name (a string)' })
    .max(200, 'at most 200 characters')
    .regex(/^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)*$/, "an action name is dotted words, e.g. 'mail.send_template'");

  const retrySchema = strict({
    /** Total attempts, the first included. */
    max: z.number({ error: 'expected a whole number of attempts' }).int('expected a whole number of attempts').min(1, 'at least 1').max(100, 'at most 100'),
    backoff: z.enum(['constant', 'linear', 'exponential'], { error: "expected 'constant', 'linear' or 'exponential'" }),
    base: durationSchema,
    max_delay: durationSchema,
    jitter: z.boolean({ error: 'expected true or false' }),
    /** Failures never retried besides TerminalError: error names, or HTTP statuses like '404' / '4xx'. */
    non_retryable: z.array(z.string().regex(/^([A-Za-z_][A-Za-z0-9_]*|[1-5](xx|\d\d))$/, "an error name (e.g. 'NotFoundError') or an HTTP status like '404' or '4xx'")),
  }).partial();

  // Flow control (docs/flow-control.md): queues are defined once at the top level, by name,
  // with queue()'s limits in this file's snake_case; queue() checks them again when loaded.
  const countSchema = z.number({ error: 'expected a whole number from 1 to 1000000' }).int('expected a whole number from 1 to 1000000').min(1, 'at least 1').max(1_000_000, 'at most 1000000');
  const periodSchema = durationSchema.refine((ms) => ms > 0, 'must be longer than 0');
  const rateSchema = strict({ limit: countSchema, period: periodSchema });
  const limitsSchema = strict({ concurrency: countSchema.optional(), rate_limit: rateSchema.optional() });
  const queueSchema = strict({ concurrency: countSchema.optional(), rate_limit: rateSchema.optional(), key: limitsSchema.optional() });
  const queueNameSchema = z
    .string({ error: 'expected a queue name (a string)' })
    .max(120, 'at most 120 characters')
    .regex(/^[A-Za-z][A-Za-z0-9_.\-]*$/, 'a queue name starts with a letter and has letters, digits, _ . or -');
  /** A key from data: a `{{ }}` template (a user id, a tenant). */
  const keyTemplate = z.string({ error: 'expected a string (may hold {{ }} templates)' }).min(1, 'must not be empty').max(500, 'at most 500 characters');
  const stepQueue = z.union([queueNameSchema, strict({ name: queueNameSchema, key: keyTemplate.optional() })], { error: 'expected a queue name, or { name, key }' });
  const runsSchema = strict({
    queue: queueNameSchema.optional(),
    key: keyTemplate.optional(),
    priority: keyTemplate.optional(),
    singleton: strict({ mode: z.enum(['skip', 'cancel'], { error: "expected 'skip' or 'cancel'" }), key: keyTemplate.optional() }).optional(),
    rate_limit: strict({ limit: countSchema, period: periodSchema, key: keyTemplate.optional() }).optional(),
  });
  /** Run-level debounce (the sdk's `debounce { period, key, maxWait }`). */
  const debounceSchema = strict({ period: periodSchema, key: keyTemplate.optional(), max_wait: periodSchema.optional() });

  const actionStep = strict({
    id: stepIdSchema,
    action: actionNameSchema,
    /** JSON; strings may hold `{{ expr }}` templates. */
    input: z.unknown().optional(),
    /** Templated idempotency key handed to the action. */
    key: z.string({ error: 'expected a string (may hold {{ }} templates)' }).min(1, 'must not be empty').max(500, 'at most 500 characters').optional(),
    retry: retrySchema.optional(),
    timeout: durationSchema.optional(),
    /** A queue declared under `queues:` (its name, or { name, key }): the action's body holds
     *  one of its slots while it runs. */
    queue: stepQueue.optional(),
  });

  const waitEvent = strict({ event: eventNameSchema, timeout: durationSchema.optional() });

  const waitStep = strict({
    id: stepIdSchema,
    /** A duration (sleep) or `{ event, timeout? }` (wait for a signal). */
    wait: z.unknown().transform((v, ctx) => {
      if (isMapping(v)) {
        const w = forward(waitEvent, v, ctx);
        return { event: w.event, timeoutMs: w.timeout };
      }
      return { sleepMs: forward(durationSchema, v, ctx) };
    }),
  });

  const conditionStep = strict({
    id: stepIdSchema,
    condition: z.string({ error: 'expected a CEL expression (a string)' }).min(1, 'must not be empty').max(2000, 'at most 2000 characters'),
  });

  const invokeStep = strict({
    id: stepIdSchema,
    /** A registered workflow's name: the child run (docs/children.md). */
    invoke: workflowNameSchema,
    /** JSON; strings may hold `{{ expr }}` templates. */
    input: z.unknown().optional(),
    /** How long to wait for the child's end (it runs on after a timeout). */
    timeout: durationSchema.optional(),
    /** What a cancel of this run does to the child: cancel it (default) or leave it running. */
    onParentCancel: z.enum(['cancel', 'abandon'], { error: "expected 'cancel' or 'abandon'" }).optional(),
  });

  const startStep = strict({
    id: stepIdSchema,
    /** A registered workflow's name: the child run, started without waiting for its end. */
    start: workflowNameSchema,
    /** JSON; strings may hold `{{ expr }}` templates. */
    input: z.unknown().optional(),
    /** What a cancel of this run does to the child: cancel it (default) or leave it running. */
    onParentCancel: z.enum(['cancel', 'abandon'], { error: "expected 'cancel' or 'abandon'" }).optional(),
  });

  const resultStep = strict({
    id: stepIdSchema,
    /** The id of an earlier `start` step: waits for that child's end. */
    result: stepIdSchema,
    /** How long to wait for the child's end (it runs on after a timeout). */
    timeout: durationSchema.optional(),
  });

  const STEP_KINDS = { action: actionStep, wait: waitStep, condition: conditionStep, invoke: invokeStep, start: startStep, result: resultStep } as const;
  const KIND_LIST = Object.keys(STEP_KINDS).join(', ');
  type StepKind = keyof typeof STEP_KINDS;

  /** Runs `schema` on `v` inside a transform, forwarding its issues (paths relative to `v`). */
  function forward<T>(schema: z.ZodType<T>, v: unknown, ctx: z.RefinementCtx): T {
    const r = schema.safeParse(v);
    if (r.success) return r.data;
    for (const i of r.error.issues) ctx.addIssue({ ...i } as never);
    return z.NEVER;
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const stepSchema = z.unknown().transform((v, ctx) => {
  if (!isMapping(v)) {
    ctx.addIssue({ code: 'custom', message: `expected a step: a mapping with id and one of ${KIND_LIST}` });
    return z.NEVER;
  }
  const kinds = (Object.keys(STEP_KINDS) as StepKind[]).filter((k) => k in v);
  // A misspelt kind ('acton') is named as the unknown key it is.
  const stray = Object.keys(v).find((k) => !['id', 'input', 'key', 'retry', 'timeout', 'queue', ...Object.keys(STEP_KINDS)].includes(k));
  if (kinds.length === 0 && stray !== undefined) {
    ctx.addIssue({ code: 'custom', path: [stray], params: { onKey: true }, message: `unknown key '${stray}' (a step needs one of ${KIND_LIST})` });
    return z.NEVER;
  }
  if (kinds.length !== 1) {
    ctx.addIssue({ code: 'custom', message: kinds.length === 0 ? `a step needs one of ${KIND_LIST}` : `a step is one of ${KIND_LIST}, not ${kinds.join(' and ')}` });
    return z.NEVER;
  }
  const kind = kinds[0]!;
  switch (kind) {
    case 'action': return { kind, ...forward(actionStep, v, ctx) };
    case 'wait': return { kind, ...forward(waitStep, v, ctx) };
    case 'condition': return { kind, ...forward(conditionStep, v, ctx) };
    case 'invoke': return { kind, ...forward(invokeStep, v, ctx) };
    case 'start': return { kind, ...forward(startStep, v, ctx) };
    case 'result': return { kind, ...forward(resultStep, v, ctx) };
  }
});

const TRIGGER_KINDS = {
  event: strict({ event: eventNameSchema }),
  schedule: strict({
    schedule: z.string({ error: 'expected a cron expression (a string)' }).min(1, 'must not be empty'),
    timezone: z.string().min(1).optional(),
    catch_up: z.enum(['latest', 'all', 'none'], { error: "expected 'latest', 'all' or 'none'" }).optional(),
  }),
  webhook: strict({ webhook: z.string({ error: 'expected a webhook path (a string)' }).max(100).regex(/^[A-Za-z0-9_\-]+$/, 'letters, digits, _ and - only') }),
  manual: strict({ manual: z.literal(true, { error: 'expected true' }) }),
} as const;
type TriggerKind = keyof typeof TRIGGER_KINDS;

const oneTrigger = z.unknown().transform((v, ctx) => {
  if (v === undefined) {
    ctx.addIssue({ code: 'custom', message: 'required: an event name, or a mapping with one of event, schedule, webhook, manual' });
    return z.NEVER;
  }
  if (typeof v === 'string') return { event: forward(eventNameSchema, v, ctx) };
  if (!isMapping(v)) {
    ctx.addIssue({ code: 'custom', message: 'expected an event name, or a mapping with one of event, schedule, webhook, manual' });
    return z.NEVER;
  }
  const kinds = (Object.keys(TRIGGER_KINDS) as TriggerKind[]).filter((k) => k in v);
  if (kinds.length !== 1) {
    ctx.addIssue({ code: 'custom', message: kinds.length === 0 ? 'a trigger needs one of event, schedule, webhook, manual' : `a trigger is one of event, schedule, webhook, manual, not ${kinds.join(' and ')}` });
    return z.NEVER;
  }
  return forward(TRIGGER_KINDS[kinds[0]!] as z.ZodType<Record<string, unknown>>, v, ctx) as PlainTriggerData;
});

return strict({
  workflow: workflowNameSchema,
  version: z.number({ error: 'expected a whole number' }).int('expected a whole number').min(1, 'at least 1').max(1_000_000, 'at most 1000000'),
  description: z.string().max(2000, 'at most 2000 characters').optional(),
  trigger: z.unknown().transform((v, ctx) => (Array.isArray(v) ? forward(z.array(oneTrigger).min(1, 'at least one trigger'), v, ctx) : [forward(oneTrigger, v, ctx)])),
  steps: z.array(stepSchema, { error: 'expected a list of steps' }).min(1, 'at least one step'),
  /** Queues by name, for `queue:` of action steps and `runs.queue`. */
  queues: z.record(z.string(), queueSchema, { error: 'expected a mapping of queue names to their limits' }).optional(),
  /** Run-level flow control: a queue slot per run, singleton, rate limit (keys are templates of `trigger`). */
  runs: runsSchema.optional(),
  /** A burst of triggers per key becomes one run with the last input (docs/flow-control.md, Debounce). */
  debounce: debounceSchema.optional(),
});
}

export type PlainTriggerData =
  | { event: string }
  | { schedule: string; timezone?: string; catch_up?: 'latest' | 'all' | 'none' }
  | { webhook: string }
  | { manual: true };

export type DefinitionData = z.output<ReturnType<typeof definitionSchema>>;
export type StepData = DefinitionData['steps'][number];
