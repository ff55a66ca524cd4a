// Run logs (docs/observability.md, "Logs"): the lines workflow code writes with `ctx.log`
// and step bodies with `info.log`, as records carrying where they come from. The session
// makes them (once per run for ctx.log: lines of replayed code are not made again); a
// RunLogSink (config `log.runs`) receives them; the default writes one line to stderr.
import type { MessageLevel } from './logger.ts';

/** One line a run wrote: its text, its level and where it comes from. */
export interface LogRecord {
  /** When it was written (epoch ms, the process's clock). */
  time: number;
  level: MessageLevel;
  message: string;
  runId: string;
  workflow: string;
  /** A step body's line: the step's name (`name#2` for a repeated one). */
  step?: string;
  /** A step body's line: its attempt, 1 on the first. */
  attempt?: number;
  /** The OpenTelemetry trace and span the line belongs to (the execution's `run` span for
   *  ctx.log, the attempt's `step` span for a body's line); only with an SDK registered. */
  traceId?: string;
  spanId?: string;
  /** The fields the caller passed (`ctx.log.info('charged', { amount })`). */
  fields?: Record<string, unknown>;
}

/** Receives each run log line at or above the configured level (config `log.runs`). */
export type RunLogSink = (record: LogRecord) => void;

/** What the session needs to make records: the sink and its level filter. */
export interface RunLogOutput {
  enabled(level: MessageLevel): boolean;
  write(record: LogRecord): void;
}
