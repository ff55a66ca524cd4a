// The Runs panel's push (issue 41; docs/panel.md "Live"): the engine's per-step events
// (engine.runs.subscribe) as server-sent events, one stream per open page. A run page gets
// its run's events and, once the run ends, a `run` event (its end is no step's event: the
// engine's result() wait tells it); the list gets every run's events. The page refreshes its
// live part on each and writes each step event's line into the run page's event list.
// Served under the panel's own guards (Host allowlist); an EventSource from another origin
// gets no CORS answer, so it cannot read the stream.
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { TimeoutError } from '../../domain/errors.ts';
import { valueText } from '../../domain/value-text.ts';
import type { Engine } from '../../runtime/engine.ts';
import type { StepEvent } from '../../runtime/step-events.ts';

/** How often an idle stream sends a comment, so a dead client's socket is noticed. */
const PING_MS = 20_000;
/** How long one result() wait lasts before the next (a client that left is noticed by then). */
const END_WAIT = '30s';
const PREVIEW = 120;

/** One step event as the run page lists it (text: the page sets it as textContent). */
export function stepEventLine(e: StepEvent): string {
  const iso = (t: number) => new Date(t).toISOString();
  const bits = [iso(e.at).slice(11, 23), e.type, `'${e.step}'`];
  if (e.attempt !== undefined) bits.push(`attempt ${e.attempt}`);
  if (e.type === 'state.published' && e.key !== undefined) bits.push(`key '${e.key}'`);
  if (e.type === 'stream.chunk' || e.type === 'stream.provisional') {
    const t = e.chunk === undefined ? '' : typeof e.chunk === 'string' ? JSON.stringify(e.chunk) : valueText(e.chunk);
    bits.push(`#${e.offset}: ${t.length > PREVIEW ? `${t.slice(0, PREVIEW)}...` : t}`);
  }
  if (e.type === 'stream.closed') bits.push(`after ${e.offset} chunk(s)`);
  // A failed attempt's chunks, shown live, are withdrawn (docs/live-output.md, From a step body).
  if (e.type === 'stream.discarded') bits.push(`${e.offset} chunk(s) withdrawn`);
  if (e.error) bits.push(`${e.error.name}: ${e.error.message}`);
  if (e.until !== undefined) bits.push(`${e.type === 'step.waiting' ? 'timeout at' : e.type === 'step.retrying' ? 'next attempt at' : 'until'} ${iso(e.until)}`);
  return bits.join(' ');
}

/** How often the list's stream tells of the step events since its last message, at most. */
const LIST_EVERY_MS = 250;

/** The SSE response. For one run: a `step` event ({ type, runId, workflow, line }) per step
 *  event, then `run` once it ended. For the list: `steps` ({ count }) at most every 250 ms
 *  while events happen (the list only refreshes: a busy engine's every event, to every open
 *  list, would be traffic for nothing). */
export function liveEvents(c: Context, engine: Engine, runId?: string): Response {
  return streamSSE(c, async (s) => {
    let open = true;
    // Writes chained: each event lands whole and in emission order.
    let chain: Promise<void> = Promise.resolve();
    const send = (event: string, data: unknown) => {
      if (open) chain = chain.then(() => s.writeSSE({ event, data: JSON.stringify(data) })).catch(() => void (open = false));
    };
    let count = 0;
    let flush: ReturnType<typeof setTimeout> | undefined;
    const off = runId !== undefined
      ? engine.runs.subscribe((e) => send('step', { type: e.type, runId: e.runId, workflow: e.workflow, line: stepEventLine(e) }), { runId })
      : engine.runs.subscribe(() => {
        count++;
        flush ??= setTimeout(() => {
          flush = undefined;
          send('steps', { count });
          count = 0;
        }, LIST_EVERY_MS);
      });
    const closed = new Promise<void>((r) => s.onAbort(() => r()));
    const ping = setInterval(() => {
      if (open) chain = chain.then(() => s.write(': ping\n\n')).then(() => undefined).catch(() => void (open = false));
    }, PING_MS);
    if (runId !== undefined) void watchEnd(engine, runId, () => open, () => send('run', { runId }));
    send('hello', { runId: runId ?? null });
    await closed;
    open = false;
    clearInterval(ping);
    clearTimeout(flush);
    off();
  });
}

/** Tells `ended` once the run is in a terminal state (at once if it is already), waiting in
 *  slices so a page that closed stops the wait within one. */
async function watchEnd(engine: Engine, runId: string, open: () => boolean, ended: () => void): Promise<void> {
  while (open()) {
    try {
      await engine.result(runId, { timeout: END_WAIT });
      return ended();
    } catch (err) {
      // Not a timeout: the run is unknown or the engine stopped; nothing more to wait for.
      if (!(err instanceof TimeoutError)) return;
    }
  }
}
