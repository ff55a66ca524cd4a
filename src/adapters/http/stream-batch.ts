// A run's stream read over the control channel (docs/live-output.md, docs/host.md): one
// request answers the chunks from an offset that are there, or waits up to waitMs for the
// first one, so an attached app follows a stream live by asking again from where the last
// answer ended (compose/attach.ts). What the run holds already is answered from one read of
// it; the wait for more is engine.runs.stream's own (its events and its poll, its end at the
// close or the run's end), here only cut into answers.
import type { Engine } from '../../runtime/engine.ts';
import type { Json } from '../../domain/json.ts';
import { encodeValue } from '../../domain/value-codec.ts';
import { streamOf } from '../../domain/published-state.ts';

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

const TIMEOUT = Symbol('timeout');

export async function streamBatch(engine: Engine, runId: string, name: string, from: number, waitMs: number): Promise<StreamBatch> {
  // Throws at once for a bad id, name or offset (the engine's own checks).
  const reader = engine.runs.stream(runId, name, { from });
  const chunks: Json[] = [];
  let bytes = 0;
  const add = (stored: Json, text: string) => {
    chunks.push(stored);
    bytes += text.length;
    return chunks.length >= MAX_BATCH_CHUNKS || bytes >= MAX_BATCH_BYTES;
  };
  // What the run holds now answers at once, whatever waitMs (a reader far behind, or one
  // after the end), in the stored form as journaled. A run that ended with the stream open
  // is left to the reader (it reads the run once more to be sure of the last chunk).
  const now = streamOf((await engine.runs.get(runId)).steps, name);
  if (now.chunks.length > from || now.closed) {
    for (const c of now.chunks.slice(from)) if (add(c, JSON.stringify(c))) break;
    return { chunks, next: from + chunks.length, done: now.closed && from + chunks.length >= now.chunks.length };
  }
  const it = reader[Symbol.asyncIterator]();
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMEOUT>((r) => (timer = setTimeout(() => r(TIMEOUT), waitMs)));
  try {
    for (;;) {
      const pending = it.next();
      // Left behind when the answer goes: its chunk (if one comes) is asked for again.
      pending.catch(() => {});
      // The first chunk is waited for; after it, only what the reader has at hand (chunks of
      // the view it read, in microtasks) joins this answer, not what is still to come.
      const r = await Promise.race([pending, chunks.length === 0 ? deadline : new Promise<typeof TIMEOUT>((ok) => setImmediate(() => ok(TIMEOUT)))]);
      if (r === TIMEOUT) break;
      if (r.done) {
        done = true;
        break;
      }
      const e = encodeValue(r.value, `chunk ${from + chunks.length} of stream '${name}'`);
      if (add(e.stored, e.text)) break;
    }
  } finally {
    clearTimeout(timer);
    // Ends the reader (its subscription) once the next() it may still be in is settled.
    void it.return?.(undefined).catch(() => {});
  }
  return { chunks, next: from + chunks.length, done };
}
