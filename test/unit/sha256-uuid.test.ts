// The engine's start path makes workflow versions (sha256Hex) and run/lease ids (randomUUID,
// src/platform/random-uuid.ts) without node:crypto (idle RSS, issue 17): the digests must be
// node:crypto's exactly (stored versions stay valid), and the ids well-formed v4 UUIDs.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/sha256.ts';
import { randomUUID } from '../../src/platform/random-uuid.ts';

describe('sha256Hex', () => {
  it('equals node:crypto on block edges, non-ASCII, lone surrogates and long text', () => {
    const cases = ['', 'abc', 'é漢字😀', '\ud800x\udfff', 'x'.repeat(100_000)];
    for (let n = 50; n < 70; n++) cases.push('a'.repeat(n), 'ü'.repeat(n));
    for (const c of cases) expect(sha256Hex(c), `length ${c.length}`).toBe(createHash('sha256').update(c).digest('hex'));
  });

  it('equals node:crypto on random strings', () => {
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (let i = 0; i < 500; i++) {
      const len = next() % 300;
      let s = '';
      for (let j = 0; j < len; j++) s += String.fromCharCode(next() % (i % 3 === 0 ? 0x80 : 0x10000));
      expect(sha256Hex(s)).toBe(createHash('sha256').update(s).digest('hex'));
    }
  });
});

describe('randomUUID (platform)', () => {
  it('makes distinct version 4 UUIDs across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const id = randomUUID();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2_000);
  });
});
