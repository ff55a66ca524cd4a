// A run's stream read over the control channel (docs/live-output.md, docs/host.md): one
// request answers the chunks from an offset that the run holds, or waits up to waitMs for the
// next one, so an attached app follows a stream live by asking again from where the last
// answer ended (compose/attach.ts). The wait is engine.runs.stream's: woken by this process's
// step event of the stream, else reading the run every LIVE_POLL_MS; unlike that reader's, it
// ends with the request (nothing is left reading the run after the answer).
import type { Engine } from '../../runtime/engine.ts';
import type { Json } from '../../domain/json.ts';
import { checkStateKey, streamOf } from '../../domain/published-state.ts';
import { isTerminal } from '../../domain/run-status.ts';
import { LIVE_POLL_MS } from '../../runtime/live-output.ts';

/** One answer holds at most this many chunks, and stops adding chunks past this many bytes
 *  of stored text (one chunk always fits: a chunk is bounded by maxPayloadBytes). */
export const MAX_BATCH_CHUNKS = 1_000;
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;

export interface StreamBatch {
  /** The chunks from the asked offset, in their stored form. */
  chunks: Json[];
  /** The offset to ask from next time. */
  next: number;
  /** The stream was closed or the run ended, and every chunk was handed out. */
  done: boolean;
}

/** The chunks of `all` from `from`, bounded; `done` when the stream can grow no more and
 *  this answer hands out its last chunk. */
function batch(all: readonly Json[], from: number, ended: boolean): StreamBatch {
  const chunks: Json[] = [];
  let bytes = 0;
  for (let i = from; i < all.length && chunks.length < MAX_BATCH_CHUNKS && bytes < MAX_BATCH_BYTES; i++) {
    chunks.push(all[i]!);
    bytes += JSON.stringify(all[i]).length;
  }
  const next = from + chunks.length;
  return { chunks, next, done: ended && next >= all.length };
}

export async function streamBatch(engine: Engine, runId: string, name: string, from: number, waitMs: number): Promise<StreamBatch> {
  // The engine's own checks and labels (runs.stream's): the name here, the id at subscribe.
  const n = checkStateKey(name, 'runs.stream name');
  let wake: (() => void) | undefined;
  const off = engine.runs.subscribe((e) => void ((e.type === 'stream.chunk' || e.type === 'stream.closed') && e.key === n && wake?.()), { runId });
  try {
    const end = Date.now() + waitMs;
    for (;;) {
      const run = await engine.runs.get(runId);
      const { chunks, closed } = streamOf(run.steps, n);
      if (chunks.length > from || closed) return batch(chunks, from, closed);
      if (isTerminal(run.status)) {
        // A view may have read the steps a moment before the status: read once more.
        return batch(streamOf((await engine.runs.get(runId)).steps, n).chunks, from, true);
      }
      const left = end - Date.now();
      if (left <= 0) return { chunks: [], next: from, done: false };
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(LIVE_POLL_MS, left));
        wake = () => (clearTimeout(t), r());
      });
      wake = undefined;
    }
  } finally {
    off();
  }
}
