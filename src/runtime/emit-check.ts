// ctx.emit payloads checked against the event's declared schemas (docs/values.md, Schemas):
// the step log a session gets (in-process, or served to a file's Deno child) is wrapped so
// that an emit whose payload a subscriber's event() or input schema refuses is recorded as a
// failed emit step with that error and publishes nothing; the session throws the error into
// the code at ctx.emit (catchable), and a replay throws the recorded one again, whatever the
// schemas say by then.
import { toErrorInfo, type ErrorInfo } from '../domain/errors.ts';
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';
import type { EmitRecorded, StepLog } from '../ports/step-log.ts';

/** What checks ctx.emit payloads: `wanted()` whether any subscriber declares a schema now
 *  (else a session's log is not wrapped at all); `refusal` of a payload (its stored form) for
 *  event `name`, or undefined when every schema accepts it. */
export interface EmitCheck {
  wanted(): boolean;
  refusal(name: string, stored: Json): Promise<Error | undefined>;
}

/** `log` with its emit checked first; every other member is the log's own. */
export function withEmitCheck(log: StepLog, check: EmitCheck): StepLog {
  const emit = async (entry: JournalEntry, event: { name: string; payload: Json; id: string }): Promise<EmitRecorded | void> => {
    const refusal = await check.refusal(event.name, event.payload);
    if (!refusal) return log.emit(entry, event);
    const error = toErrorInfo(refusal) as ErrorInfo;
    await log.record({ ...entry, status: 'failed', result: undefined, error });
    return { kind: 'emit', name: entry.name, refused: error };
  };
  // Each method bound once (a step calls several per attempt), keyed by the function itself.
  const bound = new WeakMap<object, unknown>();
  return new Proxy(log, {
    get(target, prop) {
      if (prop === 'emit') return emit;
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      let b = bound.get(v);
      if (b === undefined) bound.set(v, (b = (v as (...a: unknown[]) => unknown).bind(target)));
      return b;
    },
  });
}
