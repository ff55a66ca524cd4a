// SHA-256 of a string's UTF-8 bytes, hex: the same digest as
// createHash('sha256').update(text).digest('hex') (stored workflow and declaration versions
// stay valid). Workflow versions hash their definition at every engine start; node:crypto for
// that one digest loaded node's whole crypto module graph (~20 internal modules, OpenSSL
// tables: ~0.6 MiB of an idle engine's RSS, issue 17). @noble/hashes is a small, audited,
// dependency-free implementation; its sha2 module touches nothing of node:crypto.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** Hex SHA-256 of `text` encoded as UTF-8 (lone surrogates as U+FFFD, as Buffer.from does). */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(text)));
}
