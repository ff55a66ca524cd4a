// Typed errors. Every class sets `name` explicitly so it survives JSON, process and
// backend boundaries (we store { name, message } and rebuild by name).

export class TranquilError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Thrown by a step body (or workflow code): never retried. */
export class TerminalError extends TranquilError {}

/** A step attempt, a waitForEvent or engine.result() ran past its timeout. */
export class TimeoutError extends TranquilError {}

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

export class UnknownWorkflowError extends TranquilError {
  constructor(readonly workflow: string) {
    super(`unknown workflow '${workflow}'`);
  }
}

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

/** The engine is not in a state to do this: not started yet, or stopped (also while a
 *  result() was waiting). A caller's ordering mistake, not a storage fault. */
export class EngineStateError extends TranquilError {}

/** The backend could not be reached or refused for now (Restate ingress/admin unreachable,
 *  connection reset, an answer that did not come in time, 429/5xx). Transient: retry loops
 *  key on this class. A subclass of StorageError so callers that caught StorageError for
 *  these keep working; a StorageError that is not this one is never retried. */
export class BackendUnavailableError extends StorageError {}

export interface ErrorInfo {
  name: string;
  message: string;
}

/** Anything thrown becomes { name, message }; non-Error values keep their text. */
export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof Error) return { name: err.name || 'Error', message: err.message };
  let text: string;
  try {
    text = typeof err === 'string' ? err : JSON.stringify(err) ?? String(err);
  } catch {
    text = String(err);
  }
  return { name: 'Error', message: text };
}

/** Every class, by name: a stored error comes back as the class it was thrown as. */
const KNOWN: Record<string, abstract new (...args: never[]) => Error> = {
  TranquilError,
  TerminalError,
  TimeoutError,
  NonDeterminismError,
  ValidationError,
  UnknownWorkflowError,
  UnknownRunError,
  RunStateError,
  SerializationError,
  NotSupportedError,
  StorageError,
  EngineStateError,
  BackendUnavailableError,
};

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
    return err;
  }
  // Error's own constructor with the class as new.target: the right prototype (instanceof),
  // a stack, and the stored message verbatim.
  const err = Reflect.construct(Error, [info.message], Ctor) as Error;
  err.name = info.name;
  Object.assign(err, FIELDS[info.name]?.(info.message));
  return err;
}
