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

/** The data dir or database cannot be used (held by another engine, corrupt, ...). */
export class StorageError extends TranquilError {}

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

const KNOWN: Record<string, new (message: string) => Error> = {
  TerminalError,
  TimeoutError,
  ValidationError,
  SerializationError,
  RunStateError,
};

/** Rebuilds an error from its stored form so `instanceof` works in workflow code on replay. */
export function fromErrorInfo(info: ErrorInfo): Error {
  const Ctor = KNOWN[info.name];
  const err = Ctor ? new Ctor(info.message) : new Error(info.message);
  if (!Ctor) err.name = info.name;
  return err;
}
