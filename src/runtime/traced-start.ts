// A trigger or emit under a `start`/`emit` span (docs/observability.md): the span's context
// is stored with each run it creates, so the run's executions join the caller's trace.
import type { RunTelemetry } from '../ports/telemetry.ts';

export async function tracedStart<R>(
  telemetry: RunTelemetry | undefined,
  kind: 'start' | 'emit',
  name: string,
  id: string,
  parent: string | undefined,
  go: (traceparent: string | undefined) => Promise<R>,
  created: (r: R) => boolean,
): Promise<R> {
  const trace = telemetry?.starting(kind, name, id, parent);
  if (!trace) return go(undefined);
  try {
    const r = await go(trace.traceparent);
    trace.end(created(r));
    return r;
  } catch (err) {
    trace.end(false, err);
    throw err;
  }
}
