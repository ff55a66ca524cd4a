// How log lines are written where no sink was given (stderr): config `log.format`, 'text'
// (readable, the default) or 'json' (one object per line, for a log shipper). The keys of
// a JSON line follow what log shippers and OpenTelemetry's log data model read: `time`,
// `level`, `msg`, `trace_id`, `span_id`; the caller's fields sit beside them (never over
// them). docs/observability.md, "Logs".
import type { LogLevel, LogSink, MessageLevel } from '../ports/logger.ts';
import type { LogRecord, RunLogOutput, RunLogSink } from '../ports/run-log.ts';
import { tryJson } from '../domain/run-log-line.ts';

export const LOG_FORMATS = ['text', 'json'] as const;
/** The engine config's `log.format`. */
export type LogFormat = (typeof LOG_FORMATS)[number];

const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };


/** A value as JSON that never throws: the line is written anyway. */
function json(v: unknown): string {
  return tryJson(v) ?? JSON.stringify(String(v));
}

/** The fields a line can carry: each one that is no JSON is replaced by a note saying so. */
function jsonFields(fields: Record<string, unknown>): Record<string, unknown> {
  if (tryJson(fields) !== undefined) return fields;
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, tryJson(v) === undefined ? '[not JSON]' : v]));
}

/** One line for a run's record (no newline). */
export function recordLine(r: LogRecord, format: LogFormat): string {
  if (format === 'json') {
    const base: Record<string, unknown> = {
      time: new Date(r.time).toISOString(), level: r.level, msg: r.message, run_id: r.runId, workflow: r.workflow,
      ...(r.step !== undefined ? { step: r.step, attempt: r.attempt } : {}),
      ...(r.traceId !== undefined ? { trace_id: r.traceId, span_id: r.spanId } : {}),
    };
    return json(r.fields ? { ...jsonFields(r.fields), ...base } : base);
  }
  const where = r.step !== undefined ? `${r.workflow} ${r.runId} ${r.step} attempt ${r.attempt}` : `${r.workflow} ${r.runId}`;
  const fields = r.fields ? Object.entries(r.fields).map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : (tryJson(v) ?? '[not JSON]')}`).join('') : '';
  const ids = r.traceId !== undefined ? ` trace_id=${r.traceId} span_id=${r.spanId}` : '';
  return `${new Date(r.time).toISOString()} ${r.level.toUpperCase()} [${where}] ${r.message}${fields}${ids}`;
}

/** The default run-line sink: one line per record on stderr. */
export function stderrRecordSink(format: LogFormat): RunLogSink {
  return (r) => void process.stderr.write(`${recordLine(r, format)}\n`);
}

/** The engine's own messages on stderr: `tranquil: <message>`, or a JSON object per line. */
export function stderrMessageSink(format: LogFormat): LogSink {
  if (format === 'text') return (_level, message) => console.error(`tranquil: ${message}`);
  return (level: MessageLevel, message) => void process.stderr.write(`${json({ time: new Date().toISOString(), level, msg: message, logger: 'tranquil' })}\n`);
}

/** The level filter in front of a run-line sink; a failing sink never breaks the run. */
export function runLogOutput(level: LogLevel, sink: RunLogSink): RunLogOutput | undefined {
  if (level === 'silent') return undefined;
  const max = RANK[level];
  return {
    enabled: (l) => RANK[l] <= max,
    write(record) {
      try {
        sink(record);
      } catch {
        // A user sink that throws must not fail the workflow code that logged.
      }
    },
  };
}
