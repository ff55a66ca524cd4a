// How the CLI and the Runs panel show a stored value (src/domain/value-text.ts): plain JSON
// exactly as before (JSON.stringify), a tagged value decoded and readable; the panel's run
// page uses it, its HTML escaped.
import { expect, it } from 'vitest';
import { encodeValue } from '../../src/domain/value-codec.ts';
import { valueText } from '../../src/domain/value-text.ts';
import { runDetails } from '../../src/adapters/http/panel-html.ts';
import type { RunView } from '../../src/domain/run-view.ts';

const stored = (v: unknown) => encodeValue(v, 'test value').stored;

it('plain JSON data reads exactly as JSON.stringify wrote it (one line, or indented)', () => {
  const v = { a: [1, 'x', null, { b: true }], c: {} };
  expect(valueText(stored(v))).toBe(JSON.stringify(v));
  expect(valueText(stored(v), 2)).toBe(JSON.stringify(v, null, 2));
  expect(valueText(undefined)).toBe('undefined');
});

it('kept types read as JavaScript shows them, nested, in the same layout', () => {
  const err = Object.assign(new RangeError('too far', { cause: 'x' }), { code: 7 });
  const v = {
    m: new Map<unknown, unknown>([['a', 1], [2, { x: [1, undefined] }]]), s: new Set([1, 'b']), d: new Date(0), n: 10n, u: undefined,
    nan: NaN, z: -0, inf: -Infinity, bytes: new Uint8Array([1, 2]), buf: new ArrayBuffer(8), r: /a+/gi, url: new URL('https://x.test/p?q=1'), err, holes: [1, , 3],
  };
  expect(valueText(stored(v))).toBe(
    '{"m":Map(2) {"a" => 1, 2 => {"x":[1,undefined]}},"s":Set(2) {1, "b"},"d":1970-01-01T00:00:00.000Z,"n":10n,"u":undefined,'
    + '"nan":NaN,"z":-0,"inf":-Infinity,"bytes":Uint8Array(2) [1, 2],"buf":ArrayBuffer(8),"r":/a+/gi,"url":URL(https://x.test/p?q=1),'
    + '"err":RangeError: too far {"code":7} (cause: "x"),"holes":[1,<empty>,3]}',
  );
  expect(valueText(stored(new Map([['k', new Set([1])]])), 2)).toBe('Map(1) {\n  "k" => Set(1) {\n    1\n  }\n}');
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  expect(valueText(stored(cyclic))).toBe('{"name":"loop","self":[Circular]}');
  // A plain object whose only key is the tag reads as itself, not as a tagged value.
  expect(valueText(stored({ $tqv: [1] }))).toBe('{"$tqv":[1]}');
});

it('the panel run page shows input and output readably, escaped', () => {
  const view: RunView = {
    runId: 'r1', workflow: 'w', version: 'v1', status: 'succeeded', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', steps: [],
    input: stored({ at: new Date(0) }), output: stored(new Map([['<b>', 10n]])),
  };
  const html = runDetails(view);
  expect(html).toContain('<pre id="input">{\n  &quot;at&quot;: 1970-01-01T00:00:00.000Z\n}</pre>');
  expect(html).toContain('<pre id="output">Map(1) {\n  &quot;&lt;b&gt;&quot; =&gt; 10n\n}</pre>');
  expect(html).not.toContain('$tqv');
});
