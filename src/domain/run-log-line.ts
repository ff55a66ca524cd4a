// A run log line that crosses from a workflow file's child to the engine (docs/runner.md,
// the `runLog` frame; docs/observability.md, "Logs"). The child supplies level, message and
// plain fields, and for a step body's line which of its attempts wrote it; the engine
// attaches run id, workflow, step, attempt and trace ids itself. Pure: both ends import it.
import * as z from 'zod';

export const RUN_LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

/** The largest runLog frame the engine accepts (its JSON text, bytes): a longer line is
 *  refused, the run goes on. The child cuts a longer message to fit. */
export const MAX_RUN_LOG_LINE_BYTES = 16 * 1024;

/** What a file's run may write per execution, as token buckets (a burst, then a rate):
 *  lines past either are dropped and counted (one warning per execution). */
export const RUN_LOG_BUDGET = { burstLines: 1000, linesPerSecond: 100, burstBytes: 1024 * 1024, bytesPerSecond: 100 * 1024 } as const;

/** The trace keys of a written line, which the engine sets only when a span records
 *  (docs/observability.md): a file's field may not use one, or a JSON line of an untraced run
 *  would carry the file's trace id as its own. The other keys (run_id, workflow, step,
 *  attempt, ...) are always the engine's where they apply: a field of that name is kept as
 *  the caller's field, as in-process (`log.info('trying', { attempt })`). */
export const RESERVED_LOG_KEYS = ['trace_id', 'traceId', 'span_id', 'spanId'] as const;

/** The strict form the engine checks a runLog frame against (the frame union only routes
 *  it here): a frame with any other key (a run id, a trace id) is refused. */
export const runLogFrameSchema = z.strictObject({
  t: z.literal('runLog'),
  level: z.enum(RUN_LOG_LEVELS),
  message: z.string(),
  fields: z.record(z.string(), z.unknown()).optional(),
  /** A step body's line: the attempt (of this run, in this execution) that wrote it. */
  step: z.strictObject({ name: z.string(), attempt: z.number().int().min(1) }).optional(),
});

export type RunLogFrame = z.infer<typeof runLogFrameSchema>;

const bigints = (_k: string, x: unknown): unknown => (typeof x === 'bigint' ? x.toString() : x);

/** A value as JSON (BigInt as its digits), or undefined when it is none (a cycle, a throwing
 *  toJSON). Shared with the engine's own line writer (runtime/log-format.ts). */
export function tryJson(v: unknown): string | undefined {
  try {
    return JSON.stringify(v, bigints);
  } catch {
    return undefined;
  }
}

/** Fields as plain JSON (each value that is no JSON, a cycle, becomes "[not JSON]", as a
 *  line written in-process shows it), so that sending them cannot throw. */
export function plainFields(fields: Record<string, unknown>): Record<string, unknown> {
  const whole = tryJson(fields);
  if (whole !== undefined) return JSON.parse(whole) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => {
    const one = tryJson(v);
    return [k, one === undefined ? '[not JSON]' : (JSON.parse(one) as unknown)];
  }));
}

/** A reserved key the fields use, if any. */
export function reservedKeyIn(fields: Record<string, unknown> | undefined): string | undefined {
  if (!fields) return undefined;
  return (RESERVED_LOG_KEYS as readonly string[]).find((k) => Object.hasOwn(fields, k));
}
