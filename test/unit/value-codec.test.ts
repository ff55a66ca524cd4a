// The value codec (src/domain/value-codec.ts, issue 37): every kind it keeps comes back equal
// and of its class, plain JSON is stored as exactly the JSON it was stored as before the
// codec (so old data reads unchanged), and what it cannot keep is refused in one line naming
// what, where inside the value, and why.
import { describe, expect, it } from 'vitest';
import { AesGcmCodec, parseKeyring } from '../../src/adapters/crypto/aes-gcm-codec.ts';
import { randomBytes } from 'node:crypto';
import { SerializationError } from '../../src/domain/errors.ts';
import { openText } from '../../src/domain/payload-codec.ts';
import { decodeValue, encodeStreamed, encodeValue, streamedParts } from '../../src/domain/value-codec.ts';

const rt = <T>(v: T): T => decodeValue<T>(JSON.parse(encodeValue(v, 'v').text));

describe('value codec', () => {
  it('keeps every kind, nested at any depth, with its class', () => {
    const cause = new Error('root');
    const err = Object.assign(new TypeError('bad', { cause }), { code: 'E_BAD', at: new Date(5) });
    const value = {
      u: undefined, arr: [1, undefined, 3], d: new Date(0), m: new Map<unknown, unknown>([['a', 1], [{ k: 1 }, new Set([2n])]]), s: new Set(['x']),
      big: 10n, nan: NaN, inf: Infinity, ninf: -Infinity, nz: -0, bytes: new Uint8Array([1, 2, 255]), buf: new Uint8Array([9, 8]).buffer,
      url: new URL('https://example.com/a?b=1'), re: /a+b/gi, err, deep: { a: [{ b: { c: new Map([['k', new Date(1)]]) } }] },
    };
    const back = rt(value);
    expect(back).toEqual(value);
    expect(Object.hasOwn(back, 'u')).toBe(true);
    expect(back.d).toBeInstanceOf(Date);
    expect(back.m).toBeInstanceOf(Map);
    expect(back.s).toBeInstanceOf(Set);
    expect(typeof back.big).toBe('bigint');
    expect(Object.is(back.nz, -0)).toBe(true);
    expect(back.bytes).toBeInstanceOf(Uint8Array);
    expect(back.buf).toBeInstanceOf(ArrayBuffer);
    expect(back.url).toBeInstanceOf(URL);
    expect(back.re.flags).toBe('gi');
    expect(back.err).toBeInstanceOf(TypeError);
    expect(back.err).toMatchObject({ name: 'TypeError', message: 'bad', code: 'E_BAD' });
    expect((back.err as unknown as { at: Date }).at).toEqual(new Date(5));
    expect((back.err.cause as Error).message).toBe('root');
    expect(back.deep.a[0]!.b.c.get('k')).toEqual(new Date(1));
    expect(rt(undefined)).toBeNull(); // a top-level absent value is null, as before
    expect(rt(new Date(7))).toEqual(new Date(7));
    expect(rt(5n)).toBe(5n);
  });

  it('keeps shared and cyclic references', () => {
    const shared = { n: 1 };
    const cyc: Record<string, unknown> = { shared, again: shared };
    cyc.self = cyc;
    const back = rt(cyc);
    expect(back.self).toBe(back);
    expect(back.shared).toBe(back.again);
  });

  it('stores plain JSON data as its JSON text, exactly as before the codec; old JSON decodes as itself', () => {
    for (const v of [{ ok: true, v: 'x', n: 12345 }, [1, 'a', null, { b: [] }], 'text', 3.5, true, null]) {
      expect(encodeValue(v, 'v').text).toBe(JSON.stringify(v));
      expect(decodeValue(JSON.parse(JSON.stringify(v)))).toEqual(v);
    }
    // Written by the release before: whatever JSON.stringify made of it reads as that.
    expect(decodeValue({})).toEqual({});
    expect(decodeValue('1970-01-01T00:00:00.000Z')).toBe('1970-01-01T00:00:00.000Z');
    // A plain object that happens to use the tag's key is stored tagged, and comes back as itself.
    expect(rt({ $tqv: [1] })).toEqual({ $tqv: [1] });
    expect(rt({ $tqv: -1, other: 1 })).toEqual({ $tqv: -1, other: 1 });
  });

  it('a step result with the chunks its body streamed decodes to the result alone; a plain object with the streamed tag is not mistaken for one', () => {
    const withValue = encodeStreamed(encodeValue(new Map([['a', 1]]), 'v').text, [['tokens', 'Hel'], ['tokens', 'lo']]);
    expect(decodeValue(withValue.stored)).toEqual(new Map([['a', 1]]));
    expect(streamedParts(withValue.stored)?.c).toEqual([['tokens', 'Hel'], ['tokens', 'lo']]);
    const voidStep = encodeStreamed(undefined, [['s', 1]]);
    expect(decodeValue(voidStep.stored)).toBeUndefined();
    expect(rt({ $tqs: { c: [['s', 1]] } })).toEqual({ $tqs: { c: [['s', 1]] } });
    expect(streamedParts(JSON.parse(encodeValue({ $tqs: { c: [] } }, 'v').text))).toBeUndefined();
  });

  it('refuses what it cannot keep, naming what, where inside and why, in one line', () => {
    class User { constructor(public name: string) {} }
    const refuse = (v: unknown) => {
      try {
        encodeValue(v, (n: string) => `result of step '${n}'`, undefined, 'load');
      } catch (err) {
        expect(err).toBeInstanceOf(SerializationError);
        expect((err as Error).message).not.toContain('\n');
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refuse({ items: [0, 1, 2, { owner: new User('a') }] })).toBe("result of step 'load' at .items[3].owner: class instance User is not storable; return plain data");
    expect(refuse(new User('a'))).toBe("result of step 'load': class instance User is not storable; return plain data");
    expect(refuse({ f: function go() {} })).toBe("result of step 'load' at .f: function go is not storable; return plain data");
    expect(refuse({ s: Symbol('x') })).toBe("result of step 'load' at .s: Symbol(x) is not storable; return plain data");
    expect(refuse({ w: new WeakMap() })).toBe("result of step 'load' at .w: a WeakMap is not storable; return plain data");
    expect(refuse({ r: new ReadableStream() })).toBe("result of step 'load' at .r: class instance ReadableStream is not storable; return plain data");
    expect(refuse({ p: Promise.resolve(1) })).toBe("result of step 'load' at .p: a Promise (await it first) is not storable; return plain data");
    expect(refuse(new Map([['k', { fn: () => 1 }]]))).toMatch(/^result of step 'load' at \.get\("k"\)\.fn: function fn is not storable/);
  });

  it('refuses a value over the size limit, counted on its stored text', () => {
    expect(() => encodeValue(new Map([['k', 'x'.repeat(2000)]]), 'input', 1024)).toThrow(/^input is \d+ bytes of JSON \(2 KiB\), over the limit of 1024 bytes/);
    expect(() => encodeValue('x'.repeat(1000), 'input', 1024)).not.toThrow();
  });

  it('the encryption codec wraps the stored text unchanged', () => {
    const aes = new AesGcmCodec(parseKeyring(`k1:${randomBytes(32).toString('hex')}`, 'test'));
    const { text } = encodeValue({ m: new Map([[1, 2]]) }, 'v');
    const sealed = aes.encode(text);
    expect(sealed).not.toContain('$tqv');
    expect(decodeValue(openText(aes, sealed))).toEqual({ m: new Map([[1, 2]]) });
  });
});

describe('error fields through the value codec', () => {
  it("a thrown error's Date, Map and BigInt fields come back as themselves; a class instance field is dropped", async () => {
    const { toErrorInfo, fromErrorInfo } = await import('../../src/domain/errors.ts');
    class Agent {}
    const err = Object.assign(new Error('upstream'), { at: new Date(3), seen: new Map([['a', 1]]), id: 7n, code: 'E_UP', agent: new Agent() });
    const info = JSON.parse(JSON.stringify(toErrorInfo(err))); // as stored
    expect(Object.keys(info.fields)).toEqual(['at', 'seen', 'id', 'code']);
    const back = fromErrorInfo(info) as Error & Record<string, unknown>;
    expect(back.at).toEqual(new Date(3));
    expect(back.seen).toEqual(new Map([['a', 1]]));
    expect(back.id).toBe(7n);
    expect(back.code).toBe('E_UP');
  });
});
