// Today's encoding before the value codec (issue 37), for the bench only: the JSON round
// trip every stored value took (json.ts toJsonText, JSON.parse), decode the identity. Put in
// place of src/domain/value-codec.ts by legacy-codec-hooks.mjs in a bench child, so one
// engine build is measured with each encoding, side by side.
import { toJsonText, type Json } from '../../src/domain/json.ts';
import type { Encoded } from '../../src/domain/value-codec.ts';

export const VALUE_TAG = '$tqv';
/** The bench child reports it, so a comparison of the new codec with itself cannot pass for one. */
export const LEGACY_ENCODING = true;

export function encodeValue<A>(value: unknown, whatOf: string | ((arg: A) => string), maxBytes?: number, arg?: A): Encoded {
  const text = toJsonText(value, whatOf, maxBytes, arg);
  return { text, stored: JSON.parse(text) as Json };
}

export function decodeValue<T = unknown>(stored: Json | undefined): T {
  return stored as T;
}

export function isTaggedValue(_stored: unknown): boolean {
  return false;
}
