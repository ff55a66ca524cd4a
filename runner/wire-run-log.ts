// The run log lines of a Deno run child (ctx.log, info.log): the session here makes each
// record (dropping the lines of replayed code, as in-process), and this sends level, message,
// plain fields and, for a step body's line, its step and attempt as a `runLog` frame. The
// engine tags and writes it (src/adapters/deno/child-observer.ts); this side only keeps a
// line within the size the engine accepts.
import { MAX_RUN_LOG_LINE_BYTES, plainFields, RUN_LOG_LEVELS, type RunLogFrame } from '../src/domain/run-log-line.ts';
import type { MessageLevel } from '../src/ports/logger.ts';
import type { LogRecord, RunLogOutput } from '../src/ports/run-log.ts';

const RANK: Record<MessageLevel, number> = { error: 1, warn: 2, info: 3, debug: 4 };
const encoder = new TextEncoder();

/** Lines at `lowest` and above go to `send`; absent: the engine writes none, none are sent. */
export function wireRunLog(lowest: (typeof RUN_LOG_LEVELS)[number] | undefined, send: (f: RunLogFrame) => void): RunLogOutput | undefined {
  if (!lowest) return undefined;
  return {
    enabled: (l) => RANK[l] <= RANK[lowest],
    write(r: LogRecord) {
      const base: RunLogFrame = { t: 'runLog', level: r.level, message: r.message, ...(r.step !== undefined ? { step: { name: r.step, attempt: r.attempt ?? 1 } } : {}) };
      const frame: RunLogFrame = r.fields !== undefined ? { ...base, fields: plainFields(r.fields) } : base;
      const size = bytes(frame);
      if (size <= MAX_RUN_LOG_LINE_BYTES) return send(frame);
      // Too long for the engine: the fields go first, then the message is cut; the line says so.
      const note = ` [${r.fields !== undefined ? 'fields dropped' : 'cut'}: the line was ${size} bytes, over ${MAX_RUN_LOG_LINE_BYTES}]`;
      const whole = { ...base, message: r.message + note };
      // A character takes at most 6 bytes in JSON (an escape): this many always fit.
      send(bytes(whole) <= MAX_RUN_LOG_LINE_BYTES ? whole : { ...base, message: r.message.slice(0, Math.floor(MAX_RUN_LOG_LINE_BYTES / 6) - 200) + note });
    },
  };
}

function bytes(f: RunLogFrame): number {
  return encoder.encode(JSON.stringify(f)).length;
}
