// The value codec (issue 37, docs/values.md): every value the engine stores for workflow code
// (a step result, a run's input and output, a signal's or an event's payload) passes through
// encodeValue on its way in and decodeValue on its way back to code, on every backend (the
// SQLite journal, Restate's journal and state, a Deno child's wire all carry the stored form,
// which is JSON). So a Map comes back a Map, a Date a Date, undefined inside an object stays.
//
// Two stored forms:
// - plain JSON data (the common result: strings, finite numbers, booleans, null, arrays and
//   plain objects, nothing undefined inside) is stored as its JSON text, exactly as before
//   this codec: no extra cost, and every value written before it reads back unchanged.
// - anything else is `{"$tqv": <devalue's flattened form>}` (devalue: Date, Map, Set, BigInt,
//   NaN/±Infinity/-0, undefined, typed arrays, ArrayBuffer, URL, RegExp, shared and cyclic
//   references; an Error by our reducer below). A plain object whose only key is `$tqv` is
//   itself stored in that form, so no stored plain value is ever mistaken for one.
// What devalue cannot keep (a function, a class instance, a Symbol, a WeakMap, a stream) is
// refused with a SerializationError naming the value and its path inside it.
import { DevalueError, stringify, unflatten } from 'devalue';
import { SerializationError } from './errors.ts';
import { humanBytes, oversize, plainData, type Json } from './json.ts';

export const VALUE_TAG = '$tqv';
/** A step result that carries the chunks its body wrote to streams (docs/live-output.md,
 *  "From a step body"): `{"$tqs": {"v": <the result's stored form, absent for undefined>,
 *  "c": [[stream, chunk], ...]}}`. Committed with the result, so a retried attempt's chunks
 *  never are; decodeValue hands back the result alone. */
export const STREAMED_TAG = '$tqs';

/** Standard Error classes a stored Error comes back as (others: an Error with that name). */
const ERRORS: Record<string, ErrorConstructor> = {
  Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError,
};

interface StoredError { name: string; message: string; cause?: unknown; fields?: Record<string, unknown> }

const reducers = {
  Error: (v: unknown): StoredError | false => {
    if (!(v instanceof Error)) return false;
    const out: StoredError = { name: v.name, message: v.message };
    if (Object.hasOwn(v, 'cause')) out.cause = v.cause;
    const keys = Object.keys(v).filter((k) => k !== 'name' && k !== 'message' && k !== 'stack' && k !== 'cause');
    if (keys.length > 0) out.fields = Object.fromEntries(keys.map((k) => [k, (v as unknown as Record<string, unknown>)[k]]));
    return out;
  },
};

const revivers = {
  Error: (s: StoredError): Error => {
    const Ctor = Object.hasOwn(ERRORS, s.name) ? ERRORS[s.name]! : Error;
    const err = 'cause' in s ? new Ctor(s.message, { cause: s.cause }) : new Ctor(s.message);
    if (err.name !== s.name) Object.defineProperty(err, 'name', { value: s.name, writable: true, configurable: true, enumerable: false });
    // The stack is not stored (it names the machine's files): the text it starts with is.
    Object.defineProperty(err, 'stack', { value: `${s.name}: ${s.message}`, writable: true, configurable: true, enumerable: false });
    if (s.fields) Object.assign(err, s.fields);
    return err;
  },
};

/** A value's stored form: `text` is what a journal writes, `stored` the same as JSON data. */
export interface Encoded {
  text: string;
  stored: Json;
}

/**
 * Encodes `value` for storage, or throws a one-line SerializationError naming `what` (a
 * function of `arg`, called only for an error: a step's label would otherwise be built on
 * every step), the path inside the value and what is there; or, with `maxBytes`, that the
 * stored text is over it. A top-level undefined is stored as null (an absent value).
 */
export function encodeValue<A>(value: unknown, whatOf: string | ((arg: A) => string), maxBytes?: number, arg?: A): Encoded {
  let text: string;
  try {
    // In the try: a getter or a Proxy trap that throws is a refusal too.
    if (value === undefined) text = 'null';
    else if (plainData(value, true) && !hasTagKey(value)) text = JSON.stringify(value);
    else text = `{"${VALUE_TAG}":${stringify(value, reducers)}}`;
  } catch (err) {
    throw new SerializationError(refusal(label(whatOf, arg), err));
  }
  const bytes = maxBytes === undefined ? undefined : oversize(text, maxBytes);
  if (bytes !== undefined) {
    throw new SerializationError(
      `${label(whatOf, arg)} is ${bytes} bytes of JSON (${humanBytes(bytes)}), over the limit of ${maxBytes} bytes (${humanBytes(maxBytes!)}, engine config maxPayloadBytes)`,
    );
  }
  return { text, stored: JSON.parse(text) as Json };
}

/** The value a stored form holds: plain JSON data is itself (and so is every value written
 *  before this codec); `{"$tqv": ...}` is revived. */
export function decodeValue<T = unknown>(stored: Json | undefined): T {
  if (stored !== null && typeof stored === 'object' && !Array.isArray(stored)) {
    const flat = (stored as Record<string, unknown>)[VALUE_TAG];
    if (flat !== undefined && isTagged(stored, flat)) return unflatten(flat as number | unknown[], revivers) as T;
    const streamed = streamedParts(stored);
    if (streamed) return decodeValue<T>(streamed.v);
  }
  return stored as T;
}

/** A step result in the streamed form, its parts; undefined for any other stored form. */
export function streamedParts(stored: Json | undefined): { v?: Json; c: [string, Json][] } | undefined {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return undefined;
  const inner = (stored as Record<string, unknown>)[STREAMED_TAG] as { v?: Json; c?: unknown } | undefined;
  if (inner === null || typeof inner !== 'object' || !Array.isArray(inner.c)) return undefined;
  for (const k in stored as object) if (k !== STREAMED_TAG) return undefined;
  return inner as { v?: Json; c: [string, Json][] };
}

/** The streamed form of a step result (`text` its JSON text, absent for undefined) with the
 *  chunks its body wrote (each in stored form). */
export function encodeStreamed(text: string | undefined, chunks: readonly (readonly [string, Json])[]): Encoded {
  const out = `{"${STREAMED_TAG}":{${text === undefined ? '' : `"v":${text},`}"c":${JSON.stringify(chunks)}}}`;
  return { text: out, stored: JSON.parse(out) as Json };
}

/** True for a stored form in the tagged (devalue) form. */
export function isTaggedValue(stored: unknown): boolean {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return false;
  const flat = (stored as Record<string, unknown>)[VALUE_TAG];
  return flat !== undefined && isTagged(stored as Json, flat);
}

function isTagged(stored: Json, flat: unknown): boolean {
  if (!Array.isArray(flat) && !(typeof flat === 'number' && Number.isInteger(flat) && flat < 0)) return false;
  for (const k in stored as object) if (k !== VALUE_TAG) return false;
  return true;
}

/** A plain object with a tag key is stored in the devalue form: never mistaken for one. */
function hasTagKey(v: unknown): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && (Object.hasOwn(v, VALUE_TAG) || Object.hasOwn(v, STREAMED_TAG));
}

function label<A>(whatOf: string | ((arg: A) => string), arg: A | undefined): string {
  return typeof whatOf === 'string' ? whatOf : whatOf(arg as A);
}

/** `result of step 'load' at .items[3].owner: class instance User is not storable; return plain data` */
function refusal(what: string, err: unknown): string {
  if (!(err instanceof DevalueError)) return `${what} is not storable: ${oneLine(err)}`;
  const at = err.path ? ` at ${err.path}` : '';
  const shape = err.message.includes('symbolic keys') ? 'an object with symbol keys' : err.message.includes('__proto__') ? 'an object with a __proto__ key' : describe(err.value);
  return `${what}${at}: ${shape} is not storable; return plain data`;
}

function oneLine(err: unknown): string {
  let m: string;
  try {
    m = err instanceof Error ? err.message : String(err);
  } catch {
    m = 'it threw';
  }
  return m.replace(/\s*\n\s*/g, ' ');
}

function describe(v: unknown): string {
  try {
    return describeShape(v);
  } catch {
    return 'a value whose shape cannot be read (a Proxy or getter threw)';
  }
}

function describeShape(v: unknown): string {
  if (typeof v === 'function') return `function ${v.name || '(anonymous)'}`;
  if (typeof v === 'symbol') return `${String(v)}`;
  if (v !== null && typeof v === 'object') {
    if (typeof (v as { then?: unknown }).then === 'function') return 'a Promise (await it first)';
    const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null)?.constructor;
    const name = typeof ctor === 'function' && ctor.name ? ctor.name : 'Object';
    return isNative(ctor) ? `a ${name}` : `class instance ${name}`;
  }
  return String(v);
}

function isNative(ctor: unknown): boolean {
  try {
    return typeof ctor === 'function' && Function.prototype.toString.call(ctor).includes('[native code]');
  } catch {
    return false;
  }
}
