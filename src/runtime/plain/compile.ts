// A loaded plain workflow -> the run function the engine executes, on the ordinary step
// surface: `wait: <duration>` is step.sleep, `wait: { event }` step.waitForEvent, an action
// step.do (its retry policy and timeout), a condition a one-attempt step.do whose journaled
// result is the decision, an invoke step.invoke (a child run of a registered workflow). Expressions see only the run's recorded data, so a replay decides
// exactly as the first execution did.
import { TerminalError } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import type { WorkflowFn } from '../../../sdk/types.ts';
import { BUILTIN_NAMES, compileExpression, renderParts, splitTemplate, type Compiled, type TemplatePart } from './expressions.ts';
import type { PlainDefinition, PlainStep } from './load.ts';

/** What an action gets besides its templated input. */
export interface ActionContext {
  /** The step's `key:` rendered, else `<runId>/<stepId>`: identical on every attempt. */
  key: string;
  /** 1 on the first attempt. */
  attempt: number;
  runId: string;
  workflow: string;
  /** The definition's version number the run is pinned to. */
  version: number;
  step: string;
  /** Aborted when the attempt times out, the run is cancelled or the engine stops. */
  signal: AbortSignal;
}

/** A function the embedding app registers under a name (engine config `actions`). Its
 *  return value (JSON) is the step's output; throw TerminalError for a permanent failure. */
export type Action = (input: Json, ctx: ActionContext) => unknown;
/** Actions by the name a plain workflow's `action:` steps call them. */
export type Actions = Readonly<Record<string, Action>>;

/** The run's output when a condition was false. */
export interface SkippedOutput {
  outcome: 'skipped';
  step: string;
  condition: string;
  [k: string]: Json;
}

type Rendered = (data: Record<string, Json>) => Json;

/** A JSON value whose strings may hold templates -> a function of the run's data. */
export function template(value: Json, names: readonly string[]): Rendered {
  if (typeof value === 'string') {
    const parts = splitTemplate(value);
    if (parts === undefined || typeof parts === 'string') return () => value;
    const compiled = parts.map((p): TemplatePart | Compiled => ('expr' in p ? compileExpression(p.expr, names) : p));
    return (data) => renderParts(compiled, data);
  }
  if (Array.isArray(value)) {
    const items = value.map((v) => template(v, names));
    return (data) => items.map((f) => f(data));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => [k, template(v, names)] as const);
    return (data) => Object.fromEntries(entries.map(([k, f]) => [k, f(data)]));
  }
  return () => value;
}

/** Whether `err` is one of the step's declared non-retryable failures: an error name, or an
 *  HTTP status (`status` / `statusCode` on the error) like '404' or '4xx'. */
export function declaredPermanent(err: unknown, patterns: readonly string[]): boolean {
  if (patterns.length === 0 || typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; status?: unknown; statusCode?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  return patterns.some((p) => {
    if (/^[1-5]xx$/.test(p)) return status !== undefined && Math.floor(status / 100) === Number(p[0]);
    if (/^[1-5]\d\d$/.test(p)) return status === Number(p);
    return e.name === p;
  });
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function compilePlain(def: PlainDefinition, actions: Actions): WorkflowFn<Json, Json> {
  const names = [...BUILTIN_NAMES, ...def.steps.map((s) => s.id)];
  const plan = def.steps.map((s) => prepare(s, names));
  return async ({ input, step, ctx }): Promise<Json> => {
    const data: Record<string, Json> = { trigger: input ?? null, instance: { id: ctx.runId, workflow: ctx.workflow, version: def.version } };
    for (const p of plan) {
      const s = p.step;
      switch (s.kind) {
        case 'sleep':
          await step.sleep(s.id, s.ms);
          data[s.id] = null;
          break;
        case 'wait':
          data[s.id] = (await step.waitForEvent<Json>(s.id, s.timeoutMs !== undefined ? { timeout: s.timeoutMs } : {})) ?? null;
          break;
        case 'condition': {
          const cond = p.condition!;
          const value = await step.do(s.id, { retries: { limit: 1 } }, () => {
            let v: Json;
            try {
              v = cond.evaluate(data);
            } catch (err) {
              throw new TerminalError(`condition of step '${s.id}': ${message(err)}`);
            }
            if (typeof v !== 'boolean') throw new TerminalError(`condition of step '${s.id}': '${s.condition}' gave ${JSON.stringify(v)}, not true or false`);
            return v;
          });
          data[s.id] = value;
          if (!value) return { outcome: 'skipped', step: s.id, condition: s.condition } satisfies SkippedOutput as Json;
          break;
        }
        case 'invoke': {
          let rendered: Json;
          try {
            rendered = p.input ? p.input(data) : null;
          } catch (err) {
            throw new TerminalError(`step '${s.id}': ${message(err)}`);
          }
          const options = { ...(s.timeoutMs !== undefined ? { timeout: s.timeoutMs } : {}), ...(s.onParentCancel ? { onParentCancel: s.onParentCancel } : {}) };
          data[s.id] = (await step.invoke<Json>(s.id, s.workflow, rendered, options)) ?? null;
          break;
        }
        case 'start': {
          let rendered: Json;
          try {
            rendered = p.input ? p.input(data) : null;
          } catch (err) {
            throw new TerminalError(`step '${s.id}': ${message(err)}`);
          }
          data[s.id] = await step.start(s.id, s.workflow, rendered, s.onParentCancel ? { onParentCancel: s.onParentCancel } : undefined);
          break;
        }
        case 'result':
          // The start step's output is the child's run id (checked at load: an earlier start).
          data[s.id] = (await step.result<Json>(data[s.of] as string, s.timeoutMs !== undefined ? { timeout: s.timeoutMs } : undefined)) ?? null;
          break;
        case 'action': {
          const fn = Object.hasOwn(actions, s.action) ? actions[s.action] : undefined;
          let rendered: Json;
          let key: string | undefined;
          let queueKey: string | undefined;
          try {
            rendered = p.input ? p.input(data) : null;
            if (p.key) key = asKey(p.key(data));
            if (p.queueKey) queueKey = asKey(p.queueKey(data));
          } catch (err) {
            throw new TerminalError(`step '${s.id}': ${message(err)}`);
          }
          const text = JSON.stringify(rendered);
          // A queued action holds a slot of its queue only while its body runs (flow control).
          const options = s.queue ? { ...s.options, queue: s.queue.name, ...(queueKey !== undefined ? { key: queueKey } : {}) } : s.options;
          data[s.id] = await step.do<Json>(s.id, options, async ({ attempt, idempotencyKey, signal }) => {
            if (!fn) throw new TerminalError(`step '${s.id}': action '${s.action}' is not registered with this engine (config actions)`);
            try {
              const out = await fn(JSON.parse(text) as Json, { key: key ?? idempotencyKey, attempt, runId: ctx.runId, workflow: ctx.workflow, version: def.version, step: s.id, signal });
              return (out ?? null) as Json;
            } catch (err) {
              if (!(err instanceof TerminalError) && declaredPermanent(err, s.nonRetryable)) {
                const name = (err as { name?: unknown }).name;
                throw new TerminalError(`${typeof name === 'string' ? `${name}: ` : ''}${message(err)} (declared non-retryable)`);
              }
              throw err;
            }
          });
          break;
        }
      }
    }
    return { outcome: 'completed' } as Json;
  };
}

/** A rendered key as text: a string as it is, anything else as JSON. */
export const asKey = (k: Json): string => (typeof k === 'string' ? k : JSON.stringify(k));

/** A key template (`{{ trigger.user }}`) as a function of the run's data. */
export function keyTemplate(text: string, names: readonly string[]): (data: Record<string, Json>) => string {
  const t = template(text, names);
  return (data) => asKey(t(data));
}

function prepare(s: PlainStep, names: readonly string[]): { step: PlainStep; condition?: Compiled; input?: Rendered; key?: Rendered; queueKey?: Rendered } {
  switch (s.kind) {
    case 'condition':
      return { step: s, condition: compileExpression(s.condition, names) };
    case 'action':
      return {
        step: s, ...(s.input !== undefined ? { input: template(s.input, names) } : {}), ...(s.key !== undefined ? { key: template(s.key, names) } : {}),
        ...(s.queue?.key !== undefined ? { queueKey: template(s.queue.key, names) } : {}),
      };
    case 'invoke':
    case 'start':
      return { step: s, ...(s.input !== undefined ? { input: template(s.input, names) } : {}) };
    default:
      return { step: s };
  }
}
