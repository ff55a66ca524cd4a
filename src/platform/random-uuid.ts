// Random (version 4) UUIDs from the OS's random source, without node:crypto.
//
// Run ids and the owner lease's id are made at start and on the first trigger; node:crypto's
// randomUUID for them loaded node's whole crypto module graph (~20 internal modules, OpenSSL
// tables: ~0.8 MiB of an idle engine's RSS, issue 17). The bytes come from /dev/urandom, the
// kernel's CSPRNG that OpenSSL seeds from too, read 4 KiB at a time (node's randomUUID
// likewise buffers 128 UUIDs' worth). Where /dev/urandom cannot be read (Windows), node:crypto's
// randomUUID does the work.
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

const POOL_BYTES = 4096;
let pool: Buffer | undefined;
let used = POOL_BYTES;
let fallback: (() => string) | undefined;

function refill(): boolean {
  let fd: number | undefined;
  try {
    fd = openSync('/dev/urandom', 'r');
    pool ??= Buffer.allocUnsafe(POOL_BYTES);
    let got = 0;
    while (got < POOL_BYTES) {
      const n = readSync(fd, pool, got, POOL_BYTES - got, null);
      if (n <= 0) return false;
      got += n;
    }
    used = 0;
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A random UUID (RFC 9562 version 4), lower-case, as crypto.randomUUID() makes them. */
export function randomUUID(): string {
  if (fallback) return fallback();
  if (used + 16 > POOL_BYTES && !refill()) {
    fallback = (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomUUID;
    return fallback();
  }
  const b = pool!;
  const o = used;
  used += 16;
  b[o + 6] = (b[o + 6]! & 0x0f) | 0x40;
  b[o + 8] = (b[o + 8]! & 0x3f) | 0x80;
  const h = b.toString('hex', o, o + 16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
