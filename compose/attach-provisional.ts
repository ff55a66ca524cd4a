// An attached app's provisional stream reader (docs/live-output.md, "From an attached app"):
// engine.runs.stream's own reader (src/runtime/live-output.ts), run in the app over what the
// control channel gives it: the run's view (`runs.get`, stored chunks) and the run's step
// events (`runs.subscribe`, which carry a body's chunks as it writes them, its discards and
// its commits). So the app gets the same items, rewinds included, as a reader in the service.
import type { RunView } from '../src/domain/run-view.ts';
import { liveOutputApi, type StreamItem } from '../src/runtime/live-output.ts';
import { StepEvents, type StepEventHandler } from '../src/runtime/step-events.ts';

/** The events wake the reader; the run is read again this often all the same (a gap). */
const SAFETY_POLL_MS = 2000;

export interface ProvisionalSource {
  get(runId: string): Promise<RunView>;
  subscribe(handler: StepEventHandler, options: { runId: string }): Promise<() => void>;
}

export function provisionalStream<T>(runs: ProvisionalSource, runId: string, name: string, from: number): AsyncIterable<StreamItem<T>> {
  return {
    async *[Symbol.asyncIterator]() {
      const hub = new StepEvents();
      // Subscribed before the reader's first read of the run: no event falls between.
      const off = await runs.subscribe((e) => hub.emit(e), { runId });
      try {
        yield* liveOutputApi((id) => runs.get(id), hub, (id) => id as string, { pollMs: SAFETY_POLL_MS }).stream<T>(runId, name, { from, provisional: true });
      } finally {
        off();
      }
    },
  };
}
