// The AES-256-GCM payload codec and its keyring (src/adapters/crypto/aes-gcm-codec.ts):
// rotation, tamper detection, the key file's permission rule, and one-line errors.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { AesGcmCodec, parseKeyring, readKeyFile } from '../../src/adapters/crypto/aes-gcm-codec.ts';
import { identityCodec, openJson, sealJson } from '../../src/domain/payload-codec.ts';

const hex = () => randomBytes(32).toString('hex');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('AES-256-GCM payload codec', () => {
  it('round-trips, never stores the text, and a new active key still opens the old key\'s values', () => {
    const k1 = hex();
    const old = new AesGcmCodec(parseKeyring(`k1:${k1}`, 'test'));
    const sealed = old.encode('{"card":"4111-1111"}');
    expect(sealed).toMatch(/^tq1\.k1\./);
    expect(sealed).not.toContain('4111');
    expect(old.encode('"x"')).not.toBe(old.encode('"x"')); // fresh IV per value
    const rotated = new AesGcmCodec(parseKeyring(`k2:${hex()}\nk1:${k1}`, 'test'));
    expect(rotated.decode(sealed)).toBe('{"card":"4111-1111"}');
    expect(rotated.encode('1')).toMatch(/^tq1\.k2\./);
    expect(rotated.decode('{"plain":true}')).toBe('{"plain":true}'); // written before encryption
  });

  it('forReplay: a replay\'s n-th write seals to the same bytes; other seeds, counts or texts get other nonces; the first execution\'s key is kept after a rotation', () => {
    const k1 = hex();
    const codec = new AesGcmCodec(parseKeyring(`k1:${k1}`, 'test'));
    const writes = (c: { encode(t: string): string }) => ['{"a":1}', '{"a":1}', '"b"'].map((t) => c.encode(t));
    const first = writes(codec.forReplay('inv_1'));
    expect(writes(codec.forReplay('inv_1'))).toEqual(first); // the replay
    expect(new Set(first).size).toBe(3); // the same text at another count: another nonce
    const other = writes(codec.forReplay('inv_2'));
    const iv = (sealed: string) => Buffer.from(sealed.split('.')[2]!, 'base64url').subarray(0, 12).toString('hex');
    expect(other.map(iv).filter((n) => first.map(iv).includes(n))).toEqual([]);
    // A replay that writes another text at the same place never reuses the nonce.
    expect(iv(codec.forReplay('inv_1').encode('{"a":2}'))).not.toBe(iv(first[0]!));
    expect(first.map((x) => codec.decode(x))).toEqual(['{"a":1}', '{"a":1}', '"b"']);
    // Rotated: the history that began under k1 writes k1's bytes again; new ones use k2.
    const rotated = new AesGcmCodec(parseKeyring(`k2:${hex()}\nk1:${k1}`, 'test'));
    expect(writes(rotated.forReplay('inv_1', 'k1'))).toEqual(first);
    expect(rotated.forReplay('inv_3').encode('1')).toMatch(/^tq1\.k2\./);
    expect(() => codec.forReplay('inv_1', 'k9')).toThrow(/key 'k9'.*not among the configured keys \(k1\)/);
  });

  it('a wrong key, a missing key id, altered bytes or a relabelled key id are refused in one line', () => {
    const a = new AesGcmCodec(parseKeyring(`k1:${hex()}`, 'test'));
    const sealed = a.encode('"secret"');
    const wrong = new AesGcmCodec(parseKeyring(`k1:${hex()}`, 'test'));
    expect(() => wrong.decode(sealed)).toThrow(/could not be decrypted with key 'k1'/);
    const other = new AesGcmCodec(parseKeyring(`k2:${hex()}`, 'test'));
    expect(() => other.decode(sealed)).toThrow(/key 'k1', which is not among the configured keys \(k2\)/);
    const body = sealed.slice('tq1.k1.'.length);
    const flipped = `tq1.k1.${body.slice(0, -2)}${body.at(-2) === 'A' ? 'B' : 'A'}${body.at(-1)}`;
    expect(() => a.decode(flipped)).toThrow(/could not be decrypted/);
    const both = new AesGcmCodec(parseKeyring(`k1:${hex()},k9:${hex()}`, 'test'));
    expect(() => both.decode(`tq1.k9.${body}`)).toThrow(/could not be decrypted with key 'k9'/);
    expect(() => identityCodec.decode(sealed)).toThrow(/no encryption key is configured/);
  });

  it('JSON envelopes (Restate) seal and open; the identity codec leaves values as they are', () => {
    const c = new AesGcmCodec(parseKeyring(`k1:${hex()}`, 'test'));
    const sealed = sealJson(c, { a: [1, 'two'] });
    expect(JSON.stringify(sealed)).not.toContain('two');
    expect(openJson(c, sealed)).toEqual({ a: [1, 'two'] });
    expect(sealJson(identityCodec, { a: 1 })).toEqual({ a: 1 });
    expect(openJson(identityCodec, { $tq: 'not sealed' })).toEqual({ $tq: 'not sealed' });
  });

  it('keyring text is checked: ids, lengths, duplicates; the key never appears in a message', () => {
    const k = hex();
    expect(() => parseKeyring('', 'env TRANQUIL_KEYS')).toThrow(/env TRANQUIL_KEYS: no key/);
    expect(() => parseKeyring(`bad id:${k}`, 'x')).toThrow(/entry 1: expected <keyId>:<key>/);
    expect(() => parseKeyring('k1:abcd', 'x')).toThrow(/key 'k1' is not 32 bytes/);
    expect(() => parseKeyring(`k1:${k},k1:${hex()}`, 'x')).toThrow(/key id 'k1' appears twice/);
    expect(parseKeyring(`# comment\nk1:${randomBytes(32).toString('base64')}`, 'x').ids).toEqual(['k1']);
    try {
      parseKeyring(`k1:${k.slice(2)}`, 'x');
    } catch (err) {
      expect((err as Error).message).not.toContain(k.slice(2));
    }
  });

  it('a key file readable by group or others is refused; an owner-only one is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-keys-'));
    dirs.push(dir);
    const file = join(dir, 'keys');
    writeFileSync(file, `k1:${hex()}\n`, { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(() => readKeyFile(file)).toThrow(/permissions 644 let others read it; chmod 600 it/);
    chmodSync(file, 0o640);
    expect(() => readKeyFile(file)).toThrow(/permissions 640/);
    chmodSync(file, 0o600);
    expect(readKeyFile(file).ids).toEqual(['k1']);
    expect(() => readKeyFile(join(dir, 'none'))).toThrow(/does not exist/);
  });
});
