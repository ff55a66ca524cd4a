// The loggers workflow code gets (docs/observability.md, "Logs"): `ctx.log`, whose lines of
// replayed code are not written again, and `info.log` in a step body, tagged with the step
// and its attempt. Both make one LogRecord per line for the configured RunLogOutput.
import { ValidationError } from '../domain/errors.ts';
import type { MessageLevel } from '../ports/logger.ts';
import type { RunLogOutput } from '../ports/run-log.ts';
import type { SpanIds } from '../ports/telemetry.ts';
import type { WorkflowLogger } from '../../sdk/types.ts';

/** Where the lines come from, asked once per line (never per step). */
export interface LineSource {
  /** The code writing now is a replay of code that ran (and wrote) before: drop the line. */
  replaying?(): boolean;
  ids?(): SpanIds;
}

/** What a logger does when nobody listens (no output configured, or a dry replay check). */
export const NO_LOG: WorkflowLogger = Object.freeze({ debug() {}, info() {}, warn() {}, error() {} });

export class RunLogger implements WorkflowLogger {
  constructor(
    private readonly out: RunLogOutput,
    private readonly runId: string,
    private readonly workflow: string,
    private readonly source: LineSource,
    private readonly step?: string,
    private readonly attempt?: number,
  ) {}

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('debug', message, fields);
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.write('info', message, fields);
  }

  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('warn', message, fields);
  }

  error(message: string, fields?: Record<string, unknown>): void {
    this.write('error', message, fields);
  }

  private write(level: MessageLevel, message: string, fields: Record<string, unknown> | undefined): void {
    if (fields !== undefined && (fields === null || typeof fields !== 'object' || Array.isArray(fields))) {
      throw new ValidationError(`${this.step === undefined ? 'ctx' : 'info'}.log.${level}: fields must be an object of named values, got ${Array.isArray(fields) ? 'an array' : typeof fields}`);
    }
    if (!this.out.enabled(level) || this.source.replaying?.()) return;
    const ids = this.source.ids?.();
    this.out.write({
      time: Date.now(), level, message: String(message), runId: this.runId, workflow: this.workflow,
      ...(this.step !== undefined ? { step: this.step, attempt: this.attempt } : {}),
      ...(ids ? { traceId: ids.traceId, spanId: ids.spanId } : {}),
      ...(fields !== undefined ? { fields } : {}),
    });
  }
}
