// engine.runs' live output (issue 41, docs/live-output.md): the published state of a run
// (read from its journal's `publish` entries, the same on every backend) and the per-step
// events of the runs this process executes.
import * as z from 'zod';
import { parseDuration, type Duration } from '../domain/duration.ts';
import { TimeoutError, ValidationError } from '../domain/errors.ts';
import { checkStateKey, publishedState, streamOf, type PublishedValue } from '../domain/published-state.ts';
import { isTerminal } from '../domain/run-status.ts';
import type { Json } from '../domain/json.ts';
import type { RunView } from '../domain/run-view.ts';
import { once } from '../domain/once.ts';
import { parseOrThrow } from '../domain/validate.ts';
import { decodeValue } from '../domain/value-codec.ts';
import type { StepEventHandler, StepEvents } from './step-events.ts';

/** How often a wait for a key reads the run again when no event of this process tells it
 *  (a run executing on another Restate replica, or one this process only reads). */
export const LIVE_POLL_MS = 200;
const POLL_MS = LIVE_POLL_MS;

/** runs.stream's options (attach() checks them the same way). */
export const streamOptionsSchema = once(() => z.object({ from: z.number().int().min(0).optional() }).strict());
/** runs.subscribe's options (attach() checks them the same way). */
export const subscribeOptionsSchema = once(() => z.object({ runId: z.string().optional() }).strict());
const stateOptionsSchema = once(() => z.object({ timeout: z.union([z.number(), z.string()]).optional() }).strict());

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
   *  every run, that this process executes, in order, from now on. Returns the function
   *  that unsubscribes. */
  subscribe(handler: StepEventHandler, options?: { runId?: string }): () => void;
  /** The chunks run `runId` wrote to stream `name` (ctx.stream), decoded, in the order
   *  written, from offset `from` (default 0): what is there now, then live as the run writes
   *  more; it ends once the stream is closed or the run has ended. */
  stream<T = unknown>(runId: string, name: string, options?: { from?: number }): AsyncIterable<T>;
}

export function liveOutputApi(view: (runId: string) => Promise<RunView>, events: StepEvents, idCheck: (id: unknown) => string): LiveOutputApi {
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
      const off = events.subscribe((e) => void (e.type === 'state.published' && e.key === k && wake?.()), id);
      try {
        for (;;) {
          const left = end - Date.now();
          if (left <= 0) throw new TimeoutError(`run ${id} published no '${k}' within ${timeoutMs}ms`);
          await new Promise<void>((r) => {
            const t = setTimeout(r, Math.min(POLL_MS, left));
            wake = () => (clearTimeout(t), r());
          });
          run = await view(id);
          found = latest(run, k);
          if (found || isTerminal(run.status)) return found && decodeValue<T>(found.value);
        }
      } finally {
        off();
      }
    },
    async published(runId: string): Promise<PublishedValue[]> {
      return publishedState((await view(idCheck(runId))).steps).map(decoded);
    },
    stream<T>(runId: string, name: string, options: { from?: number } = {}): AsyncIterable<T> {
      const id = idCheck(runId);
      const n = checkStateKey(name, 'runs.stream name');
      let next = parseOrThrow(streamOptionsSchema(), options, 'runs.stream options').from ?? 0;
      return {
        async *[Symbol.asyncIterator]() {
          let wake: (() => void) | undefined;
          // Chunks this process wrote since the subscription, by offset: the one due next is
          // taken from here without reading the run again (a follower of n chunks would
          // otherwise read the run's whole journal n times). A gap (chunks written before
          // the subscription, or by another process) is read from the run.
          const heard = new Map<number, Json>();
          let closedAt: number | undefined;
          const off = events.subscribe((e) => {
            if ((e.type !== 'stream.chunk' && e.type !== 'stream.closed') || e.key !== n) return;
            if (e.type === 'stream.chunk' && e.offset !== undefined && e.chunk !== undefined && e.offset >= next) heard.set(e.offset, e.chunk);
            if (e.type === 'stream.closed') closedAt = e.offset ?? 0;
            wake?.();
          }, id);
          const fromHeard = function* (): Generator<T> {
            while (heard.has(next)) {
              const c = heard.get(next)!;
              heard.delete(next++);
              yield decodeValue<T>(c);
            }
          };
          try {
            for (;;) {
              const run = await view(id);
              const { chunks, closed } = streamOf(run.steps, n);
              while (next < chunks.length) yield decodeValue<T>(chunks[next++]!);
              if (closed) return;
              if (isTerminal(run.status)) {
                // Read once more: a view may have read the steps a moment before the status.
                const last = streamOf((await view(id)).steps, n).chunks;
                while (next < last.length) yield decodeValue<T>(last[next++]!);
                return;
              }
              for (;;) {
                for (const k of heard.keys()) if (k < next) heard.delete(k);
                yield* fromHeard();
                if (closedAt !== undefined && next >= closedAt) return;
                // A gap before what was heard, or a close ahead of it: read the run.
                if (heard.size > 0 || closedAt !== undefined) break;
                const polled = await new Promise<boolean>((r) => {
                  const t = setTimeout(() => r(true), POLL_MS);
                  wake = () => (clearTimeout(t), r(false));
                });
                wake = undefined;
                // The poll reads the run: a run executing elsewhere, or one that ended.
                if (polled) break;
              }
            }
          } finally {
            off();
          }
        },
      };
    },
    subscribe(handler: StepEventHandler, options: { runId?: string } = {}): () => void {
      if (typeof handler !== 'function') throw new ValidationError('runs.subscribe: handler must be a function');
      const opts = parseOrThrow(subscribeOptionsSchema(), options, 'runs.subscribe options');
      return events.subscribe(handler, opts.runId === undefined ? undefined : idCheck(opts.runId));
    },
  };
}
