// Errors by meaning: every class survives { name, message } (stored journals, the control
// endpoint, backend boundaries) as itself; and opening a SQLite file tells "cannot open"
// (a binding that does not load, permissions) apart from "the database file is damaged".
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as errors from '../../src/domain/errors.ts';
import {
  BackendUnavailableError, EngineStateError, fromErrorInfo, NonDeterminismError, StorageError, toErrorInfo, TranquilError,
  UnknownRunError, UnknownWorkflowError, ValidationError,
} from '../../src/domain/errors.ts';
import { parseOrThrow, type IssueFormat } from '../../src/domain/validate.ts';
import { openDatabase, openFailureKind, DB_FILE } from '../../src/adapters/sqlite/store.ts';
import * as publicApi from '../../compose/index.ts';
import { z } from 'zod';

const classes = Object.entries(errors).filter(([, v]) => typeof v === 'function' && (v === TranquilError || v.prototype instanceof TranquilError)) as [string, typeof TranquilError][];

describe('fromErrorInfo', () => {
  it('knows all 16 classes of errors.ts', () => {
    expect(classes.map(([n]) => n).sort()).toEqual([
      'BackendUnavailableError', 'CancelledError', 'ChildRunError', 'DataDirInUseError', 'EngineStateError', 'NonDeterminismError', 'NotSupportedError', 'RunStateError', 'SerializationError',
      'StorageError', 'TerminalError', 'TimeoutError', 'TranquilError', 'UnknownRunError', 'UnknownWorkflowError', 'ValidationError',
    ]);
  });

  const samples: Record<string, () => Error> = {
    NonDeterminismError: () => new NonDeterminismError('r-1', 3, "step.do('b')", "step.do('a')"),
    UnknownRunError: () => new UnknownRunError("it's-1"),
    UnknownWorkflowError: () => new UnknownWorkflowError('billing'),
    DataDirInUseError: () => new errors.DataDirInUseError(4242, 'box-1'),
  };

  it.each(classes)('%s round-trips by name, keeping instanceof and the message', (name, Ctor) => {
    const original = samples[name]?.() ?? new (Ctor as new (m: string) => Error)(`a ${name} happened`);
    const back = fromErrorInfo(JSON.parse(JSON.stringify(toErrorInfo(original))));
    expect(back).toBeInstanceOf(Ctor);
    expect(back).toBeInstanceOf(Error);
    expect(back.name).toBe(name);
    expect(back.message).toBe(original.message);
    expect(toErrorInfo(back)).toEqual(toErrorInfo(original));
  });

  it('every class names itself (errorName), so a minified build renaming classes keeps the names; a subclass in user code keeps its own', () => {
    for (const [name, Ctor] of classes) expect([name, Object.hasOwn(Ctor, 'errorName') && Ctor.errorName]).toEqual([name, name]);
    class PaymentDeclined extends errors.TerminalError {}
    expect(new PaymentDeclined('card declined').name).toBe('PaymentDeclined');
    expect(toErrorInfo(new PaymentDeclined('card declined')).name).toBe('PaymentDeclined');
  });

  it('keeps the fields a constructor derives its message from', () => {
    const nd = fromErrorInfo(toErrorInfo(new NonDeterminismError('r-1', 3, "step.do('b')", "step.do('a')"))) as NonDeterminismError;
    expect([nd.runId, nd.position, nd.expected, nd.recorded]).toEqual(['r-1', 3, "step.do('b')", "step.do('a')"]);
    expect((fromErrorInfo({ name: 'UnknownRunError', message: "unknown run 'x'" }) as UnknownRunError).runId).toBe('x');
    expect((fromErrorInfo({ name: 'UnknownWorkflowError', message: "unknown workflow 'w'" }) as UnknownWorkflowError).workflow).toBe('w');
    const owned = fromErrorInfo(toErrorInfo(new errors.DataDirInUseError(4242, 'box-1'))) as errors.DataDirInUseError;
    expect([owned.pid, owned.host]).toEqual([4242, 'box-1']);
    expect(owned).toBeInstanceOf(StorageError);
  });

  it('an unknown name (or an inherited property name) stays a plain Error carrying that name', () => {
    for (const name of ['RangeError2', 'toString', '__proto__', 'constructor']) {
      const e = fromErrorInfo({ name, message: 'm' });
      expect(Object.getPrototypeOf(e)).toBe(Error.prototype);
      expect([e.name, e.message]).toEqual([name, 'm']);
    }
  });

  it('BackendUnavailableError is a StorageError (callers that caught those keep working); the reverse is not so', () => {
    expect(new BackendUnavailableError('x')).toBeInstanceOf(StorageError);
    expect(new StorageError('disk full')).not.toBeInstanceOf(BackendUnavailableError);
    expect(new EngineStateError('engine is not started (call engine.start())')).not.toBeInstanceOf(StorageError);
  });

  it('the new classes are exported from @tranquil/engine', () => {
    expect(publicApi.EngineStateError).toBe(EngineStateError);
    expect(publicApi.BackendUnavailableError).toBe(BackendUnavailableError);
    expect(publicApi.DataDirInUseError).toBe(errors.DataDirInUseError);
  });
});

describe('parseOrThrow: one zod-to-ValidationError helper', () => {
  const schema = z.object({ webhook: z.object({ port: z.number() }).optional() }).strict();
  it.each<[IssueFormat, string, string]>([
    [{}, 'engine config', 'engine config.webhook.port: '],
    [{ path: ' ' }, 'cfg.ts', 'cfg.ts webhook.port: '],
    [{ path: 'omit' }, 'engine config', 'engine config: '],
  ])('formats the path (%j)', (format, label, prefix) => {
    expect(() => parseOrThrow(schema, { webhook: { port: 'x' } }, label, format)).toThrow(ValidationError);
    expect(() => parseOrThrow(schema, { webhook: { port: 'x' } }, label, format)).toThrow(new RegExp(`^${prefix.replace('.', '\\.')}`));
  });
  it('a value that throws while read is a ValidationError too', () => {
    const nasty = new Proxy({}, { ownKeys() { throw new Error('boom'); }, get() { throw new Error('boom'); } });
    expect(() => parseOrThrow(schema, nasty, 'engine config')).toThrow(/^engine config: cannot be read \(boom\)$/);
  });
});

describe('opening a SQLite file: cannot open vs damaged', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const newDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'tranquil-open-'));
    dirs.push(d);
    return d;
  };

  /** The error a real open throws, for the classifier's table. */
  const thrown = (fn: () => unknown): unknown => {
    try {
      fn();
    } catch (err) {
      return err;
    }
    throw new Error('expected a throw');
  };

  it('classifies the errors better-sqlite3 really throws', () => {
    const dir = newDir();
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, Buffer.alloc(8192, 0x41));
    const cases: [string, unknown, 'damaged' | 'cannot-open'][] = [
      ['native binding missing', thrown(() => new Database(join(dir, 'x.db'), { nativeBinding: join(dir, 'no-such-binding.node') })), 'cannot-open'],
      ['not a database', thrown(() => new Database(garbage, { readonly: true }).pragma('quick_check(1)')), 'damaged'],
      ['missing file, must exist', thrown(() => new Database(join(dir, 'nope.db'), { readonly: true, fileMustExist: true })), 'cannot-open'],
      ['corrupt code', Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' }), 'damaged'],
      ['permission', Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' }), 'cannot-open'],
      ['busy', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), 'cannot-open'],
      ['not an error at all', 'weird', 'cannot-open'],
    ];
    for (const [what, err, kind] of cases) expect(openFailureKind(err), what).toBe(kind);
  });

  it('a native binding that does not load is reported as "cannot open", not as a damaged file', () => {
    const dir = newDir();
    openDatabase(dir, 'full').close(); // a sound file, closed without a clean mark: it gets checked
    const err = thrown(() => openDatabase(dir, 'full', undefined, { nativeBinding: join(dir, 'no-such-binding.node') }));
    expect(err).toBeInstanceOf(StorageError);
    expect((err as Error).message).toMatch(new RegExp(`^cannot open ${join(dir, DB_FILE).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    expect((err as Error).message).not.toMatch(/damaged/);
    expect((err as Error).message.split('\n')).toHaveLength(1);
  });

  it('a file that is not a database is still "damaged"', () => {
    const dir = newDir();
    writeFileSync(join(dir, DB_FILE), Buffer.alloc(8192, 0x41));
    expect(() => openDatabase(dir, 'full')).toThrow(/the database file is damaged.*left untouched/);
  });
});
