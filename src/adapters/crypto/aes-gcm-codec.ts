// The AES-256-GCM payload codec (node:crypto) and the keyring it is built from.
//
// Keyring text: one or more `<keyId>:<key>` entries separated by commas or newlines, where
// key is 32 bytes as base64 (44 chars) or hex (64 chars); `#` starts a comment line. The
// FIRST entry is the active key: every new write uses it. The others only decrypt, so a key
// rotates by putting the new one first and keeping the old ones listed while runs written
// with them remain. It comes from an env var (TRANQUIL_KEYS by default) or a key file that
// only its owner may read (a group- or other-readable file is refused: the key would be as
// exposed as the plain data it protects).
//
// Sealed text: `tq1.<keyId>.<base64url(iv 12 | tag 16 | ciphertext)>`. The key id and the
// format tag are authenticated (AAD), so a sealed value cannot be relabelled to another key.
import { nodeCrypto } from '../../runtime/node-crypto.ts';
import { readFileSync, statSync } from 'node:fs';
import { StorageError, ValidationError } from '../../domain/errors.ts';
import { isSealed, SEALED_PREFIX, sealedKeyId, type PayloadCodec } from '../../domain/payload-codec.ts';

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Keyring {
  /** Key ids in the order given; the first is the active one. */
  ids: string[];
  keys: Map<string, Buffer>;
}

/** Parses keyring text; `source` names where it came from in errors (never the key). */
export function parseKeyring(text: string, source: string): Keyring {
  const ids: string[] = [];
  const keys = new Map<string, Buffer>();
  const entries = text.split(/[\n,]/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  if (entries.length === 0) throw new ValidationError(`${source}: no key (expected <keyId>:<32-byte key as base64 or hex>)`);
  entries.forEach((entry, i) => {
    const at = entry.indexOf(':');
    const id = at < 0 ? '' : entry.slice(0, at).trim();
    const raw = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!KEY_ID.test(id)) throw new ValidationError(`${source}: entry ${i + 1}: expected <keyId>:<key>, key id of 1-32 letters, digits, _ or -`);
    if (keys.has(id)) throw new ValidationError(`${source}: key id '${id}' appears twice`);
    const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw) ? Buffer.from(raw, 'base64') : undefined;
    if (!key || key.length !== 32) throw new ValidationError(`${source}: key '${id}' is not 32 bytes as base64 (44 chars) or hex (64 chars)`);
    ids.push(id);
    keys.set(id, key);
  });
  return { ids, keys };
}

/** Reads a key file, refusing one that anyone but its owner can read or write. */
export function readKeyFile(file: string): Keyring {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (err) {
    throw new ValidationError(`encryption key file ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new ValidationError(`encryption key file ${file}: permissions ${(mode & 0o777).toString(8)} let others read it; chmod 600 it`);
  }
  return parseKeyring(readFileSync(file, 'utf8'), `encryption key file ${file}`);
}

export class AesGcmCodec implements PayloadCodec {
  readonly name = 'aes-256-gcm';
  readonly activeKeyId: string;
  readonly keyIds: readonly string[];
  /** Loaded when a keyring is configured (this codec exists), not with every engine. */
  private readonly crypto = nodeCrypto();

  constructor(private readonly ring: Keyring) {
    this.activeKeyId = ring.ids[0]!;
    this.keyIds = ring.ids;
  }

  encode(text: string): string {
    return this.seal(text, this.activeKeyId, this.crypto.randomBytes(IV_BYTES));
  }

  /** Nonces from HMAC(nonce key, seed, n, text), synthetic as in AES-SIV: distinct across
   *  seeds and counts as random ones are, the same for a replay's n-th write of the same text,
   *  and never one nonce for two texts, also when a replay writes something else (Restate
   *  refuses it, printing both values in its 570 error). Reveals only that a replay wrote the
   *  same text at the same place, which Restate compares anyway. */
  forReplay(seed: string, keyId: string = this.activeKeyId): PayloadCodec {
    const key = this.ring.keys.get(keyId);
    if (!key) throw new StorageError(`payload key '${keyId}', which this run's first execution sealed with, is not among the configured keys (${this.keyIds.join(', ')})`);
    const nonceKey = this.crypto.createHmac('sha256', key).update('tranquil replay nonce v1').digest();
    let n = 0;
    return {
      name: this.name,
      activeKeyId: keyId,
      keyIds: this.keyIds,
      decode: (stored) => this.decode(stored),
      encode: (text) => this.seal(text, keyId, this.crypto.createHmac('sha256', nonceKey).update(`${seed}\u0000${n++}\u0000`).update(text).digest().subarray(0, IV_BYTES)),
    };
  }

  private seal(text: string, id: string, iv: Buffer): string {
    const cipher = this.crypto.createCipheriv('aes-256-gcm', this.ring.keys.get(id)!, iv);
    cipher.setAAD(Buffer.from(`${SEALED_PREFIX}${id}`));
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return `${SEALED_PREFIX}${id}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  decode(stored: string): string {
    if (!isSealed(stored)) return stored; // written before encryption was switched on
    const id = sealedKeyId(stored);
    const key = id === undefined ? undefined : this.ring.keys.get(id);
    if (!key) throw new StorageError(`payload is encrypted with key '${id ?? '?'}', which is not among the configured keys (${this.keyIds.join(', ')})`);
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length + id!.length + 1), 'base64url');
    try {
      const decipher = this.crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(`${SEALED_PREFIX}${id}`));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new StorageError(`payload could not be decrypted with key '${id}': the key is not the one it was written with, or the data was altered`);
    }
  }
}
