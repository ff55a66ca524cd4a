// JSON values and the round-trip every step result goes through, so first execution
// and replay hand the workflow the same value.
import { SerializationError } from './errors.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Returns the JSON text of value, or throws SerializationError naming `what`. */
export function toJsonText(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value, rejectNonJson);
  } catch (err) {
    throw new SerializationError(`${what} is not JSON-serialisable: ${(err as Error).message}`);
  }
  if (text === undefined) throw new SerializationError(`${what} is not JSON-serialisable`);
  return text;
}

export function roundTrip<T>(value: T, what: string): T {
  return JSON.parse(toJsonText(value, what)) as T;
}

function rejectNonJson(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') throw new TypeError('BigInt value');
  if (typeof v === 'function') throw new TypeError('function value');
  if (typeof v === 'symbol') throw new TypeError('symbol value');
  if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError(`non-finite number ${v}`);
  return v;
}
