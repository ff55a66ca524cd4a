// Trigger constructors. Each validates its arguments when called, so a bad cron or path
// fails at definition time with a message naming the field. cron-parser loads on the first
// schedule() call, not when the sdk is imported (cron-parser-loader.ts).
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { cronParser } from './cron-parser-loader.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { once } from '../src/domain/once.ts';
import { isStandardSchema, type StandardSchemaV1 } from './standard-schema.ts';

/** What a schedule does with slots that passed while the engine was not running:
 *  `'latest'` (default) runs the newest one, `'all'` runs up to the 100 newest, oldest first,
 *  `'none'` runs none (docs/triggers.md, Slot fates). */
export type CatchUpPolicy = 'latest' | 'all' | 'none';

/** A Standard Schema (zod 4, valibot, arktype), a zod-like schema (anything with safeParse)
 *  or a function: return false or a string, or throw, to reject. */
export type WebhookValidator =
  | StandardSchemaV1
  | { safeParse(data: unknown): { success: boolean; error?: { message: string } } }
  | ((body: unknown) => boolean | string | void | Promise<boolean | string | void>);

/** What starts a workflow's runs, as manual(), event(), schedule() and webhook() make it. */
export type Trigger =
  | { type: 'manual' }
  | { type: 'event'; name: string; schema?: StandardSchemaV1 }
  | { type: 'schedule'; cron: string; timezone?: string; catchUp: CatchUpPolicy }
  | { type: 'webhook'; path: string; validate?: WebhookValidator };

const nameSchema = once(() => z.string().min(1).max(200).regex(/^[A-Za-z0-9_.:\-/]+$/, 'letters, digits and _ . : - / only'));
const pathSchema = once(() => z.string().min(1).max(100).regex(/^[A-Za-z0-9_\-]+$/, 'letters, digits, _ and - only'));

function check<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  return parseOrThrow(schema, value, field, { path: 'omit' });
}

/** A run starts only when asked: engine.trigger(workflow, input) or `tranquil run`. */
export function manual(): Trigger {
  return { type: 'manual' };
}

/** A run starts for every event `name` published with engine.emit (or ctx.emit); the event's
 *  payload is the run's input, and an event id seen before starts nothing.
 *  @throws ValidationError on a name that is empty or uses other than letters, digits and
 *  `_ . : - /`.
 *  `schema`: the event's payload (Standard Schema); engine.emit refuses a payload that fails
 *  it, naming the workflow, the field and the rule, with nothing stored. */
export function event(name: string, options: { schema?: StandardSchemaV1 } = {}): Trigger {
  const n = check(nameSchema(), name, 'event(name)');
  const schema = (options as { schema?: unknown } | undefined)?.schema;
  if (schema === undefined) return { type: 'event', name: n };
  if (!isStandardSchema(schema)) throw new ValidationError(`event('${n}') schema: expected a Standard Schema (zod 4, valibot, arktype: an object with ~standard)`);
  return { type: 'event', name: n, schema };
}

/**
 * A run starts at every slot of a cron expression (cron-parser syntax, 5 or 6 fields) in
 * `timezone` (IANA, default UTC); its input is `{ slot, fate }`. `catchUp` says which missed
 * slots run (see CatchUpPolicy).
 *
 * @throws ValidationError on a bad expression, an unknown time zone or an unknown option.
 * @example
 * ```ts
 * w.trigger(schedule('0 9 * * 1-5', { timezone: 'Europe/Paris' }));
 * ```
 */
export function schedule(cron: string, options: { timezone?: string; catchUp?: CatchUpPolicy } = {}): Trigger {
  const expr = check(z.string().min(1), cron, 'schedule(cron)');
  const opts = check(
    z.object({ timezone: z.string().min(1).optional(), catchUp: z.enum(['latest', 'all', 'none']).optional() }).strict(),
    options,
    'schedule options',
  );
  if (opts.timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: opts.timezone });
    } catch {
      throw new ValidationError(`schedule timezone: unknown time zone '${opts.timezone}'`);
    }
  }
  try {
    // In a Deno workflow-file child (no permission to read node_modules) the engine checks
    // the expression instead, when it registers the file's description (docs/runner.md).
    if (!('Deno' in globalThis)) cronParser().CronExpressionParser.parse(expr, { tz: opts.timezone });
  } catch (err) {
    throw new ValidationError(`schedule(cron): '${expr}' is not a cron expression: ${(err as Error).message}`);
  }
  return { type: 'schedule', cron: expr, timezone: opts.timezone, catchUp: opts.catchUp ?? 'latest' };
}

/** A run starts for every POST to the workflow's secret URL (engine.webhookUrl(workflow);
 *  `/hooks/<path>/<secret>` too), served by the listener engine.start() opens; the JSON or
 *  form body is the run's input once `validate` accepts it (400 otherwise; docs/triggers.md).
 *  @throws ValidationError on a path that is not letters, digits, `_` and `-`, or a
 *  `validate` that is none of the WebhookValidator forms. */
export function webhook(options: { path: string; validate?: WebhookValidator }): Trigger {
  const opts = check(z.object({ path: z.unknown(), validate: z.unknown().optional() }).strict(), options, 'webhook options');
  const path = check(pathSchema(), opts.path, 'webhook path');
  const v = opts.validate;
  const okValidator = v === undefined || typeof v === 'function' || isStandardSchema(v) || (typeof v === 'object' && v !== null && typeof readSafeParse(v) === 'function');
  if (!okValidator) throw new ValidationError('webhook validate: expected a Standard Schema (zod 4, valibot, arktype), a zod schema or a function');
  return { type: 'webhook', path, validate: v as WebhookValidator | undefined };
}

/** A validator's safeParse, or undefined when reading it throws (a proxy, a getter). */
function readSafeParse(v: object): unknown {
  try {
    return (v as { safeParse?: unknown }).safeParse;
  } catch {
    return undefined;
  }
}

/** One identity per trigger: two triggers with the same key are a duplicate. */
export function triggerKey(t: Trigger): string {
  switch (t.type) {
    case 'manual': return 'manual';
    case 'event': return `event:${t.name}`;
    case 'schedule': return `schedule:${t.cron}@${t.timezone ?? 'UTC'}`;
    case 'webhook': return 'webhook';
  }
}
