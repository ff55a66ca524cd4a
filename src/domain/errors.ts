// Typed errors. Every class sets `name` explicitly so it survives JSON, process and
// backend boundaries (we store { name, message, fields?, cause? } and rebuild by name; a
// step error's own fields such as `code` and `status` come back on the rebuilt error).
import type { Json } from './json.ts';
// A cycle (value-codec.ts throws SerializationError from here); each side uses the other only
// when called, never while the modules load.
import { decodeValue, encodeValue } from './value-codec.ts';

export class TranquilError extends Error {
  /** The class's name, spelled out: the production build renames classes (esbuild's
   *  keepNames would keep them, at a cost on every closure the engine makes). Set for every
   *  class of this file from KNOWN below; a subclass without its own `errorName` (one in
   *  user code) is named by its class, as before. */
  static readonly errorName: string = 'TranquilError';

  constructor(message: string) {
    super(message);
    const cls = new.target as typeof TranquilError;
    this.name = Object.hasOwn(cls, 'errorName') ? cls.errorName : cls.name;
  }
}

/** Thrown by a step body (or workflow code): never retried. */
export class TerminalError extends TranquilError {}

/** A step attempt, a waitForEvent or engine.result() ran past its timeout. */
export class TimeoutError extends TranquilError {}

/** Thrown into workflow code at the steps it waits on when its run is cancelled: `catch` /
 *  `finally` may run cleanup steps; the run then ends `cancelled`. */
export class CancelledError extends TranquilError {}

/** Replay met a journal that the code no longer matches. */
export class NonDeterminismError extends TranquilError {
  constructor(
    readonly runId: string,
    readonly position: number,
    readonly expected: string,
    readonly recorded: string,
  ) {
    super(
      `run ${runId} diverged from its journal at position ${position}: ` +
        `code now calls ${expected}, journal recorded ${recorded}`,
    );
  }
}

/** Bad definition or bad argument to an engine call: names the field that was wrong. */
export class ValidationError extends TranquilError {}

/** No workflow of that name is registered with the engine. */
export class UnknownWorkflowError extends TranquilError {
  constructor(readonly workflow: string) {
    super(`unknown workflow '${workflow}'`);
  }
}

/** No run with that id exists (never started, or removed by retention). */
export class UnknownRunError extends TranquilError {
  constructor(readonly runId: string) {
    super(`unknown run '${runId}'`);
  }
}

/** The run is in a state where the operation makes no sense (cancel a finished run, ...). */
export class RunStateError extends TranquilError {}

/** A step's result could not be stored as JSON. */
export class SerializationError extends TranquilError {}

/** The backend cannot do this (named capability missing). */
export class NotSupportedError extends TranquilError {}

/** The data dir or database cannot be used (held by another engine, corrupt, a disk
 *  error, ...). Not transient: nothing retries it. */
export class StorageError extends TranquilError {}

/** start() refused: another live engine (a `tranquil serve`, the OS service, another app)
 *  owns the data dir's lease. `pid`/`host` name it; on this host an app can talk to a serve
 *  that owns it through `attach({ dataDir })` (docs/host.md). A StorageError, as before. */
export class DataDirInUseError extends StorageError {
  constructor(
    readonly pid: number,
    readonly host: string,
  ) {
    super(`data dir is in use by another engine (pid ${pid} on ${host}); stop it first or use another dataDir`);
  }
}

/** The engine is not in a state to do this: not started yet, or stopped (also while a
 *  result() was waiting). A caller's ordering mistake, not a storage fault. */
export class EngineStateError extends TranquilError {}

/** The backend could not be reached or refused for now (Restate ingress/admin unreachable,
 *  connection reset, an answer that did not come in time, 429/5xx). Transient: retry loops
 *  key on this class. A subclass of StorageError so callers that caught StorageError for
 *  these keep working; a StorageError that is not this one is never retried. */
export class BackendUnavailableError extends StorageError {}

/** A child run (step.invoke, step.result) ended failed or cancelled: `cause` is the child's
 *  own error (its name, message and fields); `childRunId`, `workflow` and `status` say which
 *  child and how it ended (docs/children.md). */
export class ChildRunError extends TranquilError {}

/** An error as a run or step records it (RunView.error, StepView.error). */
export interface ErrorInfo {
  /** The error's class name (`TerminalError`, `TypeError`, ...). */
  name: string;
  message: string;
  /** The error's own enumerable fields (`code`, `status`, `details`, ...) the value codec
   *  keeps, in its stored form, capped with the cause's at ERROR_FIELDS_MAX_CHARS of JSON;
   *  absent when there are none. */
  fields?: { [key: string]: Json };
  /** `err.cause` one level deep (its own cause is not kept); absent when there is none. */
  cause?: ErrorInfo;
}

/** Characters of JSON (4 KiB of ASCII) the fields of an error and of its cause may take
 *  together: an error is stored with every failed attempt, so it stays small. Fields are
 *  kept in property order; one that does not fit in what is left is dropped. */
export const ERROR_FIELDS_MAX_CHARS = 4096;
/** A cause's message is cut to this many characters. */
const CAUSE_MESSAGE_MAX = 1024;
/** Never kept as fields: the Error's own parts, and the request/response/config objects
 *  HTTP clients hang on their errors (large, and they carry credentials and headers). */
const NOT_FIELDS = new Set(['name', 'message', 'stack', 'cause', '__proto__', 'config', 'request', 'response']);

/** Anything thrown becomes { name, message, fields?, cause? }; non-Error values keep their text. */
export function toErrorInfo(err: unknown): ErrorInfo {
  if (!(err instanceof Error)) return { name: 'Error', message: textOf(err) };
  const budget = { left: ERROR_FIELDS_MAX_CHARS };
  const info: ErrorInfo = { name: err.name || 'Error', message: err.message };
  const fields = fieldsOf(err, budget);
  if (fields) info.fields = fields;
  const cause = ownValue(err, 'cause');
  if (cause !== undefined) {
    const c: ErrorInfo = cause instanceof Error ? { name: cause.name || 'Error', message: String(cause.message) } : { name: 'Error', message: textOf(cause) };
    if (c.message.length > CAUSE_MESSAGE_MAX) c.message = `${c.message.slice(0, CAUSE_MESSAGE_MAX - 1)}\u2026`;
    const cf = cause instanceof Error ? fieldsOf(cause, budget) : undefined;
    if (cf) c.fields = cf;
    info.cause = c;
  }
  return info;
}

function textOf(v: unknown): string {
  try {
    return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** A property read that may throw (a getter, a proxy) counts as absent. */
function ownValue(o: object, key: string): unknown {
  try {
    return Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;
  } catch {
    return undefined;
  }
}

/** Own enumerable fields whose value the value codec keeps (a primitive, plain data, a Date,
 *  a Map...: docs/values.md), in their stored form, within the budget. */
function fieldsOf(err: Error, budget: { left: number }): { [key: string]: Json } | undefined {
  let keys: string[];
  try {
    keys = Object.keys(err);
  } catch {
    return undefined;
  }
  let out: { [key: string]: Json } | undefined;
  for (const key of keys) {
    if (NOT_FIELDS.has(key) || budget.left <= 0) continue;
    const value = ownValue(err, key);
    if (value === undefined) continue;
    let text: string;
    try {
      // The value codec's stored form (docs/values.md): a Date or a Map field comes back as one.
      text = encodeValue(value, key).text;
    } catch {
      continue; // not storable (a class instance, a function): not kept
    }
    const cost = text.length + key.length + 4; // "key":value,
    if (cost > budget.left) continue;
    budget.left -= cost;
    (out ??= {})[key] = JSON.parse(text) as Json;
  }
  return out;
}


/** Every class, by name: a stored error comes back as the class it was thrown as. */
const KNOWN: Record<string, abstract new (...args: never[]) => Error> = {
  TranquilError,
  TerminalError,
  TimeoutError,
  CancelledError,
  NonDeterminismError,
  ValidationError,
  UnknownWorkflowError,
  UnknownRunError,
  RunStateError,
  SerializationError,
  NotSupportedError,
  StorageError,
  DataDirInUseError,
  EngineStateError,
  BackendUnavailableError,
  ChildRunError,
};
// KNOWN's keys are the names as written (object keys survive minification): each class
// names itself from them.
for (const [name, cls] of Object.entries(KNOWN)) Object.defineProperty(cls, 'errorName', { value: name });

/** The fields a class's constructor derives its message from, read back from that message. */
const FIELDS: Record<string, (message: string) => Record<string, unknown> | undefined> = {
  NonDeterminismError: (m) => {
    const x = /^run (.*) diverged from its journal at position (\d+): code now calls ([\s\S]*), journal recorded ([\s\S]*)$/.exec(m);
    return x ? { runId: x[1], position: Number(x[2]), expected: x[3], recorded: x[4] } : undefined;
  },
  UnknownRunError: (m) => {
    const x = /^unknown run '([\s\S]*)'$/.exec(m);
    return x ? { runId: x[1] } : undefined;
  },
  DataDirInUseError: (m) => {
    const x = /^data dir is in use by another engine \(pid (\d+) on ([^)]*)\)/.exec(m);
    return x ? { pid: Number(x[1]), host: x[2] } : undefined;
  },
  UnknownWorkflowError: (m) => {
    const x = /^unknown workflow '([\s\S]*)'$/.exec(m);
    return x ? { workflow: x[1] } : undefined;
  },
};

/** Rebuilds an error from its stored form so `instanceof` works in workflow code on replay
 *  and for callers across process and backend boundaries. The message is kept exactly as
 *  stored (constructors that compose their message are bypassed); unknown names give a plain
 *  Error carrying that name. */
export function fromErrorInfo(info: ErrorInfo): Error {
  const Ctor = Object.hasOwn(KNOWN, info.name) ? KNOWN[info.name] : undefined;
  if (!Ctor) {
    const err = new Error(info.message);
    err.name = info.name;
    return withExtras(err, info);
  }
  // Error's own constructor with the class as new.target: the right prototype (instanceof),
  // a stack, and the stored message verbatim.
  const err = Reflect.construct(Error, [info.message], Ctor) as Error;
  err.name = info.name;
  Object.assign(err, FIELDS[info.name]?.(info.message));
  return withExtras(err, info);
}

/** The stored fields as own enumerable properties (so a rebuilt error stores them again),
 *  and the cause as a non-enumerable own `cause`, as `new Error(m, { cause })` sets it. */
function withExtras(err: Error, info: ErrorInfo): Error {
  if (info.fields) {
    for (const [key, value] of Object.entries(info.fields)) {
      if (!NOT_FIELDS.has(key)) Object.defineProperty(err, key, { value: decodeValue(value), enumerable: true, writable: true, configurable: true });
    }
  }
  if (info.cause) Object.defineProperty(err, 'cause', { value: fromErrorInfo({ ...info.cause, cause: undefined }), enumerable: false, writable: true, configurable: true });
  return err;
}
