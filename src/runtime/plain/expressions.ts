// Conditions and `{{ }}` templates of plain workflows, on CEL (@marcbachmann/cel-js): no
// `eval`, no host objects; an expression sees only the names it is given, which are the
// run's recorded data (trigger input, persisted step outputs, instance id). Checked at load
// time against the names that exist at that point of the workflow; evaluated at run time.
import type { Environment } from '@marcbachmann/cel-js';
import type { Json } from '../../domain/json.ts';
import { celModule } from './lazy-deps.ts';

/** Names every expression may use besides the ids of the steps before it. */
export const BUILTIN_NAMES = ['trigger', 'instance'] as const;

/** CEL reserved words: never a step id (an expression could not name the step). */
export const CEL_RESERVED = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import',
  'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
]);

/** Whether CEL itself has the name (its type names: int, string, map, ...): a step id
 *  there could not be named by an expression. */
export function celBuiltinName(name: string): boolean {
  return environment([]).hasVariable(name);
}

/** One piece of a templated string: literal text, or an expression between `{{` and `}}`. */
export type TemplatePart = { text: string } | { expr: string };

/** The parts of a string; undefined when it has no `{{`. A string that is one template and
 *  nothing else keeps the value's type (`"{{ trigger.user_id }}"` can be a number). */
export function splitTemplate(s: string): TemplatePart[] | string | undefined {
  if (!s.includes('{{')) return undefined;
  const parts: TemplatePart[] = [];
  let at = 0;
  while (at < s.length) {
    const open = s.indexOf('{{', at);
    if (open < 0) {
      parts.push({ text: s.slice(at) });
      break;
    }
    if (open > at) parts.push({ text: s.slice(at, open) });
    const close = s.indexOf('}}', open + 2);
    if (close < 0) return `'{{' at character ${open + 1} is not closed by '}}'`;
    const expr = s.slice(open + 2, close).trim();
    if (expr === '') return `'{{ }}' at character ${open + 1} is empty`;
    parts.push({ expr });
    at = close + 2;
  }
  return parts;
}

/** Environments by their names: building one registers every CEL builtin (costly), and a
 *  definition checks several expressions against the same names. A few kept, oldest out. */
const environments = new Map<string, Environment>();

function environment(names: readonly string[]): Environment {
  const key = names.join(',');
  let env = environments.get(key);
  if (env) return env;
  env = new (celModule().Environment)({ unlistedVariablesAreDyn: false, limits: { maxAstNodes: 2000, maxDepth: 50 } });
  for (const n of names) env.registerVariable(n, 'dyn');
  if (environments.size >= 64) environments.delete(environments.keys().next().value!);
  environments.set(key, env);
  return env;
}

/** First line of a cel-js message (the rest is a caret drawing of the expression). */
function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0]!.trim();
}

/** What is wrong with `expr` when only `known` names exist, or undefined when it is fine.
 *  `later`: step ids that exist but have not run yet at this point. */
export function checkExpression(expr: string, known: readonly string[], later: readonly string[]): string | undefined {
  let result: { valid: boolean; error?: unknown };
  try {
    result = environment(known).check(expr);
  } catch (err) {
    return `'${expr}' is not a CEL expression: ${firstLine(err)}`;
  }
  if (result.valid) return undefined;
  const msg = firstLine(result.error);
  const unknown = /^Unknown variable: (\S+)$/.exec(msg)?.[1];
  if (unknown !== undefined) {
    if (later.includes(unknown)) return `'${expr}' references step '${unknown}', which has not run yet at this point`;
    return `'${expr}' references unknown name '${unknown}' (known here: ${known.join(', ')})`;
  }
  if (/^(Expected|Unexpected|Unterminated|Invalid)/.test(msg) || (result.error as Error | undefined)?.name === 'ParseError') {
    return `'${expr}' is not a CEL expression: ${msg}`;
  }
  return `'${expr}': ${msg}`;
}

/** A checked expression, ready to evaluate against a run's recorded data. */
export interface Compiled {
  readonly source: string;
  evaluate(data: Record<string, Json>): Json;
}

export function compileExpression(expr: string, names: readonly string[]): Compiled {
  const program = environment(names).parse(expr);
  return {
    source: expr,
    evaluate(data) {
      let value: unknown;
      try {
        value = program(data);
      } catch (err) {
        throw new Error(`'${expr}': ${firstLine(err)}`);
      }
      return toJson(value, expr);
    },
  };
}

/** A CEL value as JSON: ints (bigint) become numbers, maps objects; anything without a JSON
 *  form (bytes, types) is refused with the expression named. */
export function toJson(v: unknown, expr: string): Json {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`'${expr}' gave ${v}, which JSON cannot carry`);
    return v;
  }
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(`'${expr}' gave ${v}, beyond a JSON number's exact range`);
    return Number(v);
  }
  // cel-js's uint (not exported from its entry): a bigint in `.value`.
  if ((v as object)?.constructor?.name === 'UnsignedInt') return toJson((v as { value: bigint }).value, expr);
  if (v instanceof celModule().Optional) return v.hasValue() ? toJson(v.value(), expr) : null;
  if (Array.isArray(v)) return v.map((x) => toJson(x, expr));
  if (v instanceof Map) {
    const o: Record<string, Json> = {};
    for (const [k, x] of v) o[String(k)] = toJson(x, expr);
    return o;
  }
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const o: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = toJson(x, expr);
    return o;
  }
  throw new Error(`'${expr}' gave a ${(v as object)?.constructor?.name ?? typeof v}, which has no JSON form`);
}

/** Renders a templated string: one whole template keeps its value; otherwise each value is
 *  put in the text (strings as they are, anything else as JSON). */
export function renderParts(parts: readonly (TemplatePart | Compiled)[], data: Record<string, Json>): Json {
  const compiled = (p: TemplatePart | Compiled): p is Compiled => 'evaluate' in p;
  if (parts.length === 1 && compiled(parts[0]!)) return parts[0].evaluate(data);
  let out = '';
  for (const p of parts) {
    if (compiled(p)) {
      const v = p.evaluate(data);
      out += typeof v === 'string' ? v : JSON.stringify(v);
    } else out += (p as { text: string }).text;
  }
  return out;
}
