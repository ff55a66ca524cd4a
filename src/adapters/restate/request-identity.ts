// Request identity: restate-server signs every request it sends to the SDK endpoint with an
// ed25519 key the engine mints in the data dir (0600); the endpoint accepts only requests
// signed by it, so another local process cannot invoke workflow handlers on the loopback port.
import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

/** `publickeyv1_<base58 of the raw 32-byte ed25519 public key>`, the format Restate logs and the SDK takes. */
export function restatePublicKey(privatePem: string): string {
  const der = createPublicKey(privatePem).export({ type: 'spki', format: 'der' });
  return `publickeyv1_${base58(der.subarray(der.length - 32))}`;
}

export function ensureRequestIdentity(dir: string): { privateKeyFile: string; publicKey: string } {
  const privateKeyFile = join(dir, 'request-identity.pem');
  if (!existsSync(privateKeyFile)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(privateKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  return { privateKeyFile, publicKey: restatePublicKey(readFileSync(privateKeyFile, 'utf8')) };
}
