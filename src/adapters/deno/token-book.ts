// Single-use tokens for run children: 32 random bytes each, handed to one child in an env var,
// claimed at most once (a second claim is refused), expiring if unclaimed. Compared in
// constant time; the book keeps only the token bytes and what they unlock.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { TOKEN_BYTES } from '../../domain/runner-protocol.ts';

interface Entry<T> {
  bytes: Buffer;
  value: T;
  expires: NodeJS.Timeout;
}

export class TokenBook<T> {
  private readonly open = new Set<Entry<T>>();

  constructor(private readonly ttlMs: number) {}

  /** A fresh token (64 hex digits) for `value`; it expires after the ttl if unclaimed. */
  issue(value: T, onExpire?: () => void): string {
    const bytes = randomBytes(TOKEN_BYTES);
    const e: Entry<T> = { bytes, value, expires: setTimeout(() => (this.open.delete(e), onExpire?.()), this.ttlMs) };
    e.expires.unref();
    this.open.add(e);
    return bytes.toString('hex');
  }

  /** The value of an open token, removing it (single use); undefined for anything else. */
  claim(hex: string): T | undefined {
    if (!/^[0-9a-f]+$/.test(hex) || hex.length !== TOKEN_BYTES * 2) return undefined;
    const given = Buffer.from(hex, 'hex');
    let found: Entry<T> | undefined;
    // Every open token is compared, each in constant time: the time taken says nothing about
    // how close a guess came.
    for (const e of this.open) if (timingSafeEqual(e.bytes, given)) found = e;
    if (!found) return undefined;
    clearTimeout(found.expires);
    this.open.delete(found);
    return found.value;
  }

  /** Withdraws a token that will not be used (the child failed to start). */
  revoke(value: T): void {
    for (const e of this.open) if (e.value === value) clearTimeout(e.expires), this.open.delete(e);
  }

  get size(): number {
    return this.open.size;
  }
}
