// What every fuzz target checks: an error is one of the documented classes (errors.ts), and
// a rejected input leaves the SQLite file as it was. Also the value generators they share.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import {
  NotSupportedError, RunStateError, SerializationError, StorageError, TimeoutError, TranquilError, UnknownRunError,
  UnknownWorkflowError, ValidationError,
} from '../../src/domain/errors.ts';

export const DOCUMENTED = [ValidationError, UnknownWorkflowError, UnknownRunError, RunStateError, TimeoutError, NotSupportedError, SerializationError, StorageError];

/** Undefined when `err` is a documented engine error; otherwise a description of what it was. */
export function undocumented(err: unknown, allowed: readonly Function[] = DOCUMENTED): string | undefined {
  if (err instanceof TranquilError && allowed.some((C) => err instanceof C)) return undefined;
  const e = err as Error;
  return `${e?.constructor?.name ?? typeof err} ${e?.name}: ${e?.message ?? String(err)}`;
}

const TABLES = ['runs', 'steps', 'signals', 'events', 'schedules', 'schedule_slots', 'webhook_secrets'];

function readAll(db: Database.Database): string {
  return JSON.stringify(TABLES.map((t) => db.prepare(`SELECT * FROM ${t}`).all().map((r) => JSON.stringify(r)).sort()));
}

/** Everything stored, as text: equal before and after = nothing changed. */
export function snapshot(dbFile: string): string {
  const db = new Database(dbFile, { readonly: true });
  try {
    return readAll(db);
  } finally {
    db.close();
  }
}

/**
 * `snapshot()` for a file read again and again: one read-only connection, and the text is read
 * again only when another connection has committed since (`PRAGMA data_version`). A fuzz run
 * that rejects most calls would otherwise re-read a file that grows with every accepted call.
 */
export class StoredState {
  private readonly db: Database.Database;
  private version = -1;
  private text = '';
  constructor(dbFile: string) {
    this.db = new Database(dbFile, { readonly: true });
  }
  now(): string {
    const v = this.db.pragma('data_version', { simple: true }) as number;
    if (v !== this.version) {
      this.text = readAll(this.db);
      this.version = v;
    }
    return this.text;
  }
  close(): void {
    this.db.close();
  }
}

/** Values no JSON API should choke on: cycles, throwing getters/toJSON, proxies, symbols, BigInt, huge strings. */
const nasty = fc.constantFrom<unknown>(
  (() => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    return o;
  })(),
  { toJSON() { throw new Error('toJSON exploded'); } },
  Object.defineProperty({}, 'boom', { enumerable: true, get() { throw new Error('getter exploded'); } }),
  new Proxy({}, {
    // Explodes on every read except the hook fast-check uses to print it in a counterexample.
    has: (_t, k) => k === fc.toStringMethod,
    ownKeys() { throw new Error('proxy exploded'); },
    get(_t, k) {
      if (k === fc.toStringMethod) return () => 'ThrowingProxy';
      throw new Error('proxy exploded');
    },
  }),
  Symbol('s'),
  10n ** 30n,
  () => 1,
  NaN,
  Infinity,
  -0,
  'x'.repeat(300_000),
  '\u0000\ud800\uffff',
  Object.create(null),
  new Date(NaN),
  [undefined, () => 1],
);

export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withBoxedValues: true, withObjectString: true }) },
  { weight: 2, arbitrary: fc.jsonValue() },
  { weight: 2, arbitrary: nasty },
);

/** Strings that look like ids and names, including the edge of every documented limit. */
export const anyName: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.stringMatching(/^[A-Za-z0-9_.:\-/]{0,210}$/),
  fc.constantFrom('', ' ', 'a'.repeat(200), 'a'.repeat(201), '../../etc/passwd', 'x\ny', 'evt-1', '%00', 'run id'),
  anyValue,
);
