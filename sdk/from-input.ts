// `fromInput('user.id')`: a key or priority function that is also data. In code it is a plain
// function of the input; in a Deno workflow file, whose functions the engine never runs, it
// crosses in the file's description as its path and the engine makes the same function
// again (docs/flow-control.md, In workflow files). Reading walks own properties only, so a
// path cannot reach a prototype (`__proto__`, `constructor`).
import * as z from 'zod';
import { parseOrThrow } from '../src/domain/validate.ts';

const INPUT_PATH = Symbol.for('tranquil.inputPath');

/** A dot path into the input: names and array indices, 1 to 8 segments. */
export const inputPathSchema = z
  .string()
  .max(200)
  .regex(/^[A-Za-z_$][\w$-]*(\.([A-Za-z_$][\w$-]*|\d{1,6}))*$/, { error: "expected a dot path into the input such as 'user.id' or 'items.0.sku'" })
  .refine((p) => p.split('.').length <= 8, { error: 'at most 8 segments' });

/** A function of the input reading `path`, carrying the path as data. */
export type InputPathFn<T> = ((input: unknown) => T) & { readonly [INPUT_PATH]: string };

/** The value at `path` in the input (own properties only), undefined where it is missing. */
function readPath(input: unknown, segments: readonly string[]): unknown {
  let v: unknown = input;
  for (const s of segments) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, s)) return undefined;
    v = (v as Record<string, unknown>)[s];
  }
  return v;
}

/** `runs: { queue, key: fromInput('userId'), priority: fromInput<number>('tier') }`: the key
 *  (or priority) is the input's value at the dot path. The engine checks the value as it
 *  checks any key or priority function's result (a key must be a non-empty string). */
export function fromInput<T = string>(path: string): InputPathFn<T> {
  const p = parseOrThrow(inputPathSchema, path, 'fromInput(path)');
  const segments = Object.freeze(p.split('.'));
  const fn = (input: unknown) => readPath(input, segments) as T;
  Object.defineProperty(fn, INPUT_PATH, { value: p, enumerable: false });
  Object.defineProperty(fn, 'name', { value: `fromInput(${p})` });
  return fn as InputPathFn<T>;
}

/** The path of a function made by fromInput(), or undefined for any other value. */
export function inputPathOf(f: unknown): string | undefined {
  if (typeof f !== 'function') return undefined;
  const p = (f as unknown as Record<symbol, unknown>)[INPUT_PATH];
  return typeof p === 'string' ? p : undefined;
}
