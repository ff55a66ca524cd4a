// The W3C `traceparent` text a run's trace context is stored as (and a webhook receives):
// `00-<trace id, 32 hex>-<parent span id, 16 hex>-<flags, 2 hex>`. Parsed here rather than
// through the global propagator: the engine must read what it stored even when the app
// registered another propagator (or none).
import { ROOT_CONTEXT, TraceFlags, isSpanContextValid, trace, type Context, type SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/** A context whose remote parent is `text`; undefined when it is not a valid traceparent. */
export function contextOf(text: string | undefined, base: Context = ROOT_CONTEXT): Context | undefined {
  if (text === undefined) return undefined;
  const m = TRACEPARENT.exec(text.trim().toLowerCase());
  // Version ff is forbidden; a later version's extra fields are ignored (W3C, "versioning").
  if (!m || m[1] === 'ff' || (m[1] === '00' && text.trim().length !== 55)) return undefined;
  const sc: SpanContext = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(sc) ? trace.setSpanContext(base, sc) : undefined;
}

export function traceparentOf(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
