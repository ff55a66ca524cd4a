// engine.runs' live output (issue 41, docs/live-output.md): the published state of a run
// (read from its journal's `publish` entries, the same on every backend) and the per-step
// events of the runs this process executes.
import * as z from 'zod';
import { parseDuration, type Duration } from '../domain/duration.ts';
import { NotSupportedError, TimeoutError, ValidationError } from '../domain/errors.ts';
import { checkStateKey, publishedState, streamOf, type PublishedValue } from '../domain/published-state.ts';
import { isTerminal } from '../domain/run-status.ts';
import type { Json } from '../domain/json.ts';
import type { RunView } from '../domain/run-view.ts';
import { once } from '../domain/once.ts';
import { parseOrThrow } from '../domain/validate.ts';
import { decodeValue } from '../domain/value-codec.ts';
import type { StepEvent, StepEventHandler, StepEvents } from './step-events.ts';

/** How often a wait for a key reads the run again when no event of this process tells it
 *  (a run executing on another Restate replica, or one this process only reads). */
export const LIVE_POLL_MS = 200;
const POLL_MS = LIVE_POLL_MS;

/** runs.stream's options (attach() checks them the same way, and refuses `provisional`). */
export const streamOptionsSchema = once(() => z.object({ from: z.number().int().min(0).optional(), provisional: z.boolean().optional() }).strict());
/** runs.subscribe's options (attach() checks them the same way). */
export const subscribeOptionsSchema = once(() => z.object({ runId: z.string().optional() }).strict());
/** engine.runs.subscribe's: `from`, an offset in the run's event log (a backend that keeps one). */
const engineSubscribeOptionsSchema = once(() => subscribeOptionsSchema().extend({ from: z.number().int().min(0).optional() }).strict());
const stateOptionsSchema = once(() => z.object({ timeout: z.union([z.number(), z.string()]).optional() }).strict());

/** What a provisional reader of a stream gets (runs.stream with `provisional: true`). */
export type StreamItem<T = unknown> =
  | { offset: number; chunk: T; provisional?: { step: string; attempt: number } }
  | { rewind: number };

/** What `engine.runs` gains for live output. */
export interface LiveOutputApi {
  /** The latest value run `runId` published under `key` (ctx.publish), as the code gave it
   *  (a Map, a Date: docs/values.md); undefined when it published none. With `timeout`, a
   *  key not published yet is waited for, up to that long (TimeoutError after it); a run
   *  that ends without publishing it answers undefined. */
  state<T = unknown>(runId: string, key: string, options?: { timeout?: Duration }): Promise<T | undefined>;
  /** Every key the run published, with its latest value (decoded), when and by which step,
   *  in the order the keys were first published. */
  published(runId: string): Promise<PublishedValue[]>;
  /** Follows the step events (src/runtime/step-events.ts) of run `options.runId`, or of
   *  every run, that this process executes, in order, from now on; on Restate a run's
   *  events from every replica. `from` (Restate, with `runId`): the run's events from that
   *  offset of its event log (0: from its start), then live, in log order. Returns the
   *  function that unsubscribes. */
  subscribe(handler: StepEventHandler, options?: { runId?: string; from?: number }): () => void;
  /** The chunks run `runId` wrote to stream `name` (ctx.stream, info.stream in a body),
   *  decoded, in the order stored, from offset `from` (default 0): what is there now, then
   *  live as the run commits more; it ends once the stream is closed or the run has ended.
   *  A step body's chunks come when its step's result is committed. */
  stream<T = unknown>(runId: string, name: string, options?: { from?: number; provisional?: false }): AsyncIterable<T>;
  /** The same, with a step body's chunks as it writes them (in this process): each item is a
   *  chunk at its offset (`provisional` names the attempt while it is not committed yet), or
   *  a `rewind`: the attempt that wrote the provisional chunks from that offset on failed,
   *  drop them; the next attempt's chunks come from that offset. */
  stream<T = unknown>(runId: string, name: string, options: { from?: number; provisional: true }): AsyncIterable<StreamItem<T>>;
}

/** How a reader outside the executing process learns that a run may have changed. */
export interface LiveWaits {
  /** How often a wait reads the run again when nothing tells it (default LIVE_POLL_MS). */
  pollMs?: number;
  /** A source of "the backend was written" (the SQLite file changed): `wake` is called then;
   *  returns the function that stops it. */
  changes?: (wake: () => void) => () => void;
}

export function liveOutputApi(view: (runId: string) => Promise<RunView>, events: StepEvents, idCheck: (id: unknown) => string, waits: LiveWaits = {}): LiveOutputApi {
  const pollMs = waits.pollMs ?? POLL_MS;
  const decoded = (v: PublishedValue): PublishedValue => ({ ...v, value: decodeValue(v.value) });
  const latest = (run: RunView, key: string) => publishedState(run.steps).find((p) => p.key === key);
  return {
    async state<T>(runId: string, key: string, options: { timeout?: Duration } = {}): Promise<T | undefined> {
      const id = idCheck(runId);
      const k = checkStateKey(key, 'runs.state key');
      const opts = parseOrThrow(stateOptionsSchema(), options, 'runs.state options');
      let timeoutMs: number | undefined;
      if (opts.timeout !== undefined) {
        try {
          timeoutMs = Math.max(0, parseDuration(opts.timeout, 'runs.state timeout'));
        } catch (err) {
          throw new ValidationError((err as Error).message);
        }
      }
      let run = await view(id);
      let found = latest(run, k);
      if (found || timeoutMs === undefined || isTerminal(run.status)) return found && decodeValue<T>(found.value);
      // Woken at once by this process's publish event, else by the poll.
      const end = Date.now() + timeoutMs;
      let wake: (() => void) | undefined;
      let changed = false;
      const off = events.subscribe((e) => void (e.type === 'state.published' && e.key === k && wake?.()), id);
      const offChanges = waits.changes?.(() => ((changed = true), wake?.()));
      try {
        for (;;) {
          const left = end - Date.now();
          if (left <= 0) throw new TimeoutError(`run ${id} published no '${k}' within ${timeoutMs}ms`);
          if (!changed) {
            await new Promise<void>((r) => {
              const t = setTimeout(r, Math.min(pollMs, left));
              wake = () => (clearTimeout(t), r());
            });
          }
          changed = false;
          run = await view(id);
          found = latest(run, k);
          if (found || isTerminal(run.status)) return found && decodeValue<T>(found.value);
        }
      } finally {
        off();
        offChanges?.();
      }
    },
    async published(runId: string): Promise<PublishedValue[]> {
      return publishedState((await view(idCheck(runId))).steps).map(decoded);
    },
    stream: ((runId: string, name: string, options: { from?: number; provisional?: boolean } = {}) => {
      const id = idCheck(runId);
      const n = checkStateKey(name, 'runs.stream name');
      const opts = parseOrThrow(streamOptionsSchema(), options, 'runs.stream options');
      return { [Symbol.asyncIterator]: () => readStream(view, events, id, n, opts.from ?? 0, opts.provisional === true, { ...waits, pollMs }) };
    }) as LiveOutputApi['stream'],
    subscribe(handler: StepEventHandler, options: { runId?: string; from?: number } = {}): () => void {
      if (typeof handler !== 'function') throw new ValidationError('runs.subscribe: handler must be a function');
      const opts = parseOrThrow(engineSubscribeOptionsSchema(), options, 'runs.subscribe options');
      if (opts.from !== undefined) {
        if (opts.runId === undefined) throw new ValidationError('runs.subscribe options.from: reads one run\'s event log: give options.runId too');
        if (!events.logged) throw new NotSupportedError('runs.subscribe options.from: this backend keeps no step events (they are seen live in the executing process); the run\'s journal (runs.get) is its record');
      }
      return events.subscribe(handler, opts.runId === undefined ? undefined : idCheck(opts.runId), opts.from);
    },
  };
}

type Source = { step: string; attempt: number };
const keyOf = (s: Source): string => `${s.attempt}:${s.step}`;

/** runs.stream's iterator: what is stored from `from`, then live. Committed chunks this
 *  process wrote since the subscription come from their step events without reading the run
 *  again (a follower of n chunks would otherwise read the run's whole journal n times); a
 *  gap (chunks written before the subscription, or by another process) and a run executing
 *  elsewhere are read from the run (the latter every POLL_MS). `provisional`: a body's
 *  chunks as it writes them, reconciled with what its step commits (docs/live-output.md). */
async function* readStream<T>(view: (runId: string) => Promise<RunView>, events: StepEvents, id: string, n: string, from: number, provisional: boolean, waits: LiveWaits & { pollMs: number }): AsyncGenerator<T | StreamItem<T>> {
  let next = from;
  const inbox: StepEvent[] = [];
  let wake: (() => void) | undefined;
  // The backend changed (a write to the SQLite file): read the run again.
  let changed = false;
  const offChanges = waits.changes?.(() => ((changed = true), wake?.()));
  /** Reads of the run in a row that did not close a gap an event showed (the view may lag
   *  behind the event): each waits a little longer before the next. */
  let gapReads = 0;
  const off = events.subscribe((e) => {
    if (e.key !== n) return;
    if (e.type === 'stream.chunk' || e.type === 'stream.closed' || (provisional && (e.type === 'stream.provisional' || e.type === 'stream.discarded'))) {
      inbox.push(e);
      wake?.();
    }
  }, id);
  // The attempt whose provisional chunks this reader shows: from offset `base`, `shown` of them.
  let track: (Source & { base: number; shown: number }) | undefined;
  /** Attempts whose chunks were committed, or are not shown (heard from the middle). */
  const settled = new Set<string>();
  const item = (offset: number, chunk: Json, prov?: Source): T | StreamItem<T> =>
    provisional ? { offset, chunk: decodeValue<T>(chunk), ...(prov ? { provisional: { step: prov.step, attempt: prov.attempt } } : {}) } : decodeValue<T>(chunk);
  /** The committed chunk at `next`. */
  function* committed(chunk: Json, src: Source): Generator<T | StreamItem<T>> {
    settled.add(keyOf(src));
    if (track && keyOf(track) === keyOf(src)) {
      // Already shown as written: confirmed, not repeated.
      if (next - track.base < track.shown) return void next++;
    } else if (track) {
      // Another writer's chunk lands where provisional ones were shown: they go.
      if (track.base + track.shown > next) yield { rewind: next };
      track = undefined;
    }
    yield item(next++, chunk);
  }
  function* uncommitted(e: StepEvent): Generator<StreamItem<T>> {
    const src = { step: e.step, attempt: e.attempt ?? 1 };
    const k = keyOf(src);
    if (settled.has(k)) return;
    if (e.type === 'stream.discarded') {
      if (track && keyOf(track) === k) {
        if (track.base + track.shown > next) yield { rewind: next };
        track = undefined;
      }
      return;
    }
    if (track && keyOf(track) !== k) {
      // One attempt at a time is shown; a settled one gives way (its shown chunks are confirmed).
      if (settled.has(keyOf(track)) && next >= track.base + track.shown) track = undefined;
      else return void settled.add(k);
    }
    if (!track) {
      if (e.offset !== 0) return void settled.add(k);
      track = { ...src, base: next, shown: 0 };
    }
    if (e.offset !== track.shown || e.chunk === undefined) return;
    yield item(track.base + track.shown++, e.chunk, src) as StreamItem<T>;
  }
  /** The stream ended: provisional chunks never committed are withdrawn. */
  function* finish(): Generator<StreamItem<T>> {
    if (track && track.base + track.shown > next) yield { rewind: next };
  }
  try {
    for (;;) {
      const run = await view(id);
      const s = streamOf(run.steps, n);
      while (next < s.chunks.length) yield* committed(s.chunks[next]!, s.sources[next]!);
      if (s.closed) return yield* finish();
      if (isTerminal(run.status)) {
        // Read once more: a view may have read the steps a moment before the status.
        const last = streamOf((await view(id)).steps, n);
        while (next < last.chunks.length) yield* committed(last.chunks[next]!, last.sources[next]!);
        return yield* finish();
      }
      // An attempt in flight here that wrote before this reader listened: shown from its start.
      if (provisional && !track) {
        for (const h of events.inFlight(id, n)) {
          if (settled.has(keyOf(h))) continue;
          const t = (track = { step: h.step, attempt: h.attempt, base: next, shown: 0 });
          for (const c of h.chunks) yield item(t.base + t.shown++, c, h);
          break;
        }
      }
      let gap = false;
      while (!gap) {
        while (inbox.length > 0) {
          const e = inbox.shift()!;
          if (e.type === 'stream.chunk') {
            if (e.offset === undefined || e.chunk === undefined || e.offset < next) continue;
            if (e.offset > next) {
              // Chunks before it were not heard: read from the run; the event is kept for after.
              inbox.unshift(e);
              gap = true;
              break;
            }
            gapReads = 0;
            yield* committed(e.chunk, { step: e.step, attempt: e.attempt ?? 1 });
          } else if (e.type === 'stream.closed') {
            if (next >= (e.offset ?? 0)) return yield* finish();
            inbox.unshift(e);
            gap = true;
            break;
          } else yield* uncommitted(e);
        }
        if (gap) {
          if (gapReads > 0) await new Promise((r) => setTimeout(r, Math.min(25 * 2 ** gapReads, waits.pollMs)));
          gapReads++;
          break;
        }
        if (changed) {
          changed = false;
          break;
        }
        const polled = await new Promise<boolean>((r) => {
          const t = setTimeout(() => r(true), waits.pollMs);
          wake = () => (clearTimeout(t), r(false));
        });
        wake = undefined;
        // The poll reads the run: a run executing elsewhere, or one that ended.
        if (polled) break;
      }
    }
  } finally {
    off();
    offChanges?.();
  }
}
