// A stored value as a person reads it (the CLI's `runs describe`/`run`, the Runs panel):
// plain JSON data exactly as JSON.stringify writes it (what these views always showed), and
// a value in the codec's tagged form decoded and written in the same notation, with what
// JSON has no word for written as JavaScript shows it: Map(2) {"a" => 1}, Set(1) {1}, a Date
// as its ISO text, 10n, undefined, NaN, -0, /re/g, URL(https://x/), TypeError: msg. Machine
// output (`--json`) keeps the stored form instead: that one is lossless (docs/values.md).
import type { Json } from './json.ts';
import { decodeValue, isTaggedValue } from './value-codec.ts';

/** `stored` (a value's stored form) as readable text; `indent`: spaces per level, as
 *  JSON.stringify's third argument (0: one line). */
export function valueText(stored: Json | undefined, indent = 0): string {
  if (stored === undefined) return 'undefined';
  if (!isTaggedValue(stored)) return JSON.stringify(stored, null, indent);
  return new Writer(indent).write(decodeValue(stored), 0);
}

class Writer {
  private readonly seen = new Set<object>();

  constructor(private readonly indent: number) {}

  write(v: unknown, depth: number): string {
    switch (typeof v) {
      case 'undefined': return 'undefined';
      case 'string': return JSON.stringify(v);
      case 'number': return Object.is(v, -0) ? '-0' : String(v);
      case 'bigint': return `${v}n`;
      case 'boolean': return String(v);
      case 'object': break;
      default: return String(v);
    }
    if (v === null) return 'null';
    if (this.seen.has(v)) return '[Circular]';
    this.seen.add(v);
    try {
      return this.object(v, depth);
    } finally {
      this.seen.delete(v);
    }
  }

  private object(v: object, depth: number): string {
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
    if (v instanceof RegExp) return String(v);
    if (v instanceof URL) return `URL(${v.href})`;
    if (v instanceof URLSearchParams) return `URLSearchParams(${v.toString()})`;
    if (v instanceof Error) {
      const fields = Object.keys(v).length > 0 ? ` ${this.entries('', Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${this.space()}${this.write(x, depth + 1)}`), '{', '}', depth)}` : '';
      const cause = 'cause' in v ? ` (cause: ${this.write(v.cause, depth + 1)})` : '';
      return `${v.name}: ${v.message}${fields}${cause}`;
    }
    if (v instanceof Map) return this.entries(`Map(${v.size}) `, [...v].map(([k, x]) => `${this.write(k, depth + 1)} => ${this.write(x, depth + 1)}`), '{', '}', depth);
    if (v instanceof Set) return this.entries(`Set(${v.size}) `, [...v].map((x) => this.write(x, depth + 1)), '{', '}', depth);
    if (v instanceof ArrayBuffer) return `ArrayBuffer(${v.byteLength})`;
    if (v instanceof DataView) return `DataView(${v.byteLength})`;
    if (ArrayBuffer.isView(v)) {
      const items = [...(v as unknown as Iterable<number | bigint>)].map((x) => this.write(x, depth + 1));
      return this.entries(`${v.constructor.name}(${items.length}) `, items, '[', ']', depth);
    }
    if (Array.isArray(v)) {
      const items: string[] = [];
      for (let i = 0; i < v.length; i++) items.push(i in v ? this.write(v[i], depth + 1) : '<empty>');
      return this.entries('', items, '[', ']', depth);
    }
    return this.entries('', Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${this.space()}${this.write(x, depth + 1)}`), '{', '}', depth);
  }

  private space(): string {
    return this.indent > 0 ? ' ' : '';
  }

  /** `prefix{a,b}` on one line, or one item per line at `depth + 1` (JSON.stringify's layout). */
  private entries(prefix: string, items: string[], open: string, close: string, depth: number): string {
    if (items.length === 0) return `${prefix}${open}${close}`;
    if (this.indent === 0) return `${prefix}${open}${items.join(prefix ? ', ' : ',')}${close}`;
    const pad = ' '.repeat(this.indent * (depth + 1));
    return `${prefix}${open}\n${items.map((i) => pad + i).join(',\n')}\n${' '.repeat(this.indent * depth)}${close}`;
  }
}

/** A stream's chunk (stored form) as text in a run of chunks: a string as written (a token
 *  stream reads as prose), any other value readably on a line of its own. */
export function chunkText(stored: Json): string {
  return typeof stored === 'string' ? stored : `${valueText(stored)}\n`;
}
