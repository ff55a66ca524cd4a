// The payload codec (like Temporal's payload codecs): every run input, step result, error
// detail, signal and event payload passes through it before any journal stores it (the
// SQLite file, Restate's journal and state), and back on the way out. Pure shape only: the
// AES-256-GCM codec lives in src/adapters/crypto/, the identity codec here.
//
// Two forms of one sealed value:
// - text (SQLite columns): the JSON text itself when the codec is off; `tq1.<keyId>.<b64>`
//   when sealed. No JSON text starts with `tq1.`, so a column written before encryption was
//   switched on is still read (it passes through as the JSON it is).
// - JSON (Restate: a value travels as JSON): `{ "$tq": "tq1.<keyId>.<b64>" }`.
import type { Json } from './json.ts';
import { StorageError } from './errors.ts';

export const SEALED_PREFIX = 'tq1.';

export interface PayloadCodec {
  /** 'identity' (off) or the cipher's name. */
  readonly name: string;
  /** The key id new writes use; undefined for the identity codec. */
  readonly activeKeyId?: string;
  /** Every key id this codec can open. */
  readonly keyIds: readonly string[];
  /** JSON text -> stored text. */
  encode(text: string): string;
  /** Stored text -> JSON text. Plain JSON text passes through; a sealed text whose key is
   *  missing or wrong throws a one-line StorageError. */
  decode(stored: string): string;
  /** A codec for values a replay writes again (Restate compares a replay's state writes and
   *  sends with its journal): the n-th encode under one seed gets the same nonce, so the n-th
   *  value, the same on a replay, seals to the same bytes. The seed must be unique per
   *  execution history (an invocation id). Never used inside a journaled closure (it runs once,
   *  so the count would differ on a replay). `keyId`: the key the history's first execution
   *  sealed with (a replay after a rotation must write what it wrote); default the active one.
   *  Absent: encode is deterministic already. */
  forReplay?(seed: string, keyId?: string): PayloadCodec;
}

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/** The key id a sealed text names (undefined for plain JSON text). */
export function sealedKeyId(stored: string): string | undefined {
  if (!isSealed(stored)) return undefined;
  const end = stored.indexOf('.', SEALED_PREFIX.length);
  return end < 0 ? undefined : stored.slice(SEALED_PREFIX.length, end);
}

/** The codec that stores payloads as they are (the default). It still refuses sealed text:
 *  a data dir written with a key, read without one, fails with a clear error, never with a
 *  JSON parse error deep inside a view. */
export const identityCodec: PayloadCodec = {
  name: 'identity',
  keyIds: [],
  encode: (text) => text,
  decode(stored) {
    if (!isSealed(stored)) return stored;
    throw new StorageError(`payload is encrypted with key '${sealedKeyId(stored) ?? '?'}' but no encryption key is configured (set TRANQUIL_KEYS or encryption.keyFile)`);
  },
};

/** A JSON value in its stored JSON form (Restate). Identity: the value itself. */
export function sealJson(codec: PayloadCodec, value: Json): Json {
  if (codec.name === 'identity') return value;
  return { $tq: codec.encode(JSON.stringify(value ?? null)) };
}

/** `undefined` stays undefined (an absent result is not a payload). */
export function sealOptional<T extends Json | undefined>(codec: PayloadCodec, value: T): Json | undefined {
  return value === undefined ? undefined : sealJson(codec, value as Json);
}

/** The value a stored JSON form holds: an envelope is opened, anything else passes. */
export function openJson<T = Json>(codec: PayloadCodec, stored: unknown): T {
  if (stored !== null && typeof stored === 'object' && !Array.isArray(stored)) {
    const keys = Object.keys(stored);
    const sealed = (stored as { $tq?: unknown }).$tq;
    if (keys.length === 1 && typeof sealed === 'string' && isSealed(sealed)) return JSON.parse(codec.decode(sealed)) as T;
  }
  return stored as T;
}

/** Stored text (a SQLite column) -> value. */
export function openText<T = Json>(codec: PayloadCodec, stored: string): T {
  return JSON.parse(codec.decode(stored)) as T;
}
