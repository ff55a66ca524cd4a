// Per-step events (issue 41, docs/live-output.md): what a run's steps do as it happens, for
// an app to follow one run or all without polling (Cloudflare's `instance.subscribe()`).
// The RunSession emits them in the process that executes the run, once per real attempt
// and never for what a replay hands back; the hub hands them to the subscribers in the order
// they were emitted, each on its own microtask so a slow or throwing handler never holds or
// breaks the run. In-process only: nothing is stored (the journal is the record; `runs get`
// reads it), so a subscriber sees what happens from its subscription on.
import type { ErrorInfo } from '../domain/errors.ts';
import type { Json } from '../domain/json.ts';
import type { StepKind } from '../domain/run-view.ts';
import type { Logger } from '../ports/logger.ts';
import type { StepLog } from '../ports/step-log.ts';

/** Every step event type (docs/live-output.md, "Per-step events"). */
export const STEP_EVENT_TYPES = [
  'step.started', 'step.succeeded', 'step.failed', 'step.retrying', 'step.sleeping', 'step.waiting', 'step.signaled', 'step.parked', 'state.published', 'stream.chunk', 'stream.closed',
  'stream.provisional', 'stream.discarded',
] as const;
/** What a step did: started, succeeded, failed, retrying, sleeping, waiting, signaled,
 *  parked; a publish recorded; a stream's chunk or close recorded; a step body's attempt
 *  wrote a chunk (provisional: committed with its result) or failed (its chunks discarded). */
export type StepEventType = (typeof STEP_EVENT_TYPES)[number];

/** One thing a step did, as `engine.runs.subscribe`'s handler gets it. */
export interface StepEvent {
  type: StepEventType;
  runId: string;
  workflow: string;
  /** The step's unique name in the run (`name#2` for a repeat; `publish:<key>` for a publish). */
  step: string;
  kind: StepKind;
  /** step.started / succeeded / failed / retrying, stream.*: the attempt (from 1). */
  attempt?: number;
  /** Epoch ms when it happened (the executing process's clock). */
  at: number;
  /** step.failed, step.retrying, step.parked: the attempt's error. */
  error?: ErrorInfo;
  /** step.retrying: when the next attempt is due; step.sleeping: the wake time; step.waiting:
   *  the wait's deadline (absent: none). Epoch ms. */
  until?: number;
  /** state.published: the key; stream.chunk / stream.closed: the stream's name. */
  key?: string;
  /** stream.chunk: the chunk's offset in its stream (from 0); stream.closed: the number of
   *  chunks the stream holds; stream.provisional: the chunk's index among its attempt's
   *  writes to the stream (from 0); stream.discarded: how many the attempt wrote. */
  offset?: number;
  /** stream.chunk: the chunk as journaled (stored form: decodeValue gives back a Map, a
   *  Date...), already durable when the event is emitted; stream.provisional: as the body
   *  wrote it (stored form), not durable yet. */
  chunk?: Json;
}

/** runs.subscribe's handler; one that throws (or rejects) is logged and gets the next event. */
export type StepEventHandler = (event: StepEvent) => void | Promise<void>;

/** What a RunSession emits to. `listening` is asked first, so a run nobody follows builds no
 *  event object on its step path. */
export interface StepEventSink {
  listening(runId: string): boolean;
  emit(event: StepEvent): void;
  /** A step body's attempt wrote `chunk` to `stream` (held until the attempt ends). */
  hold?(runId: string, stream: string, step: string, attempt: number, chunk: Json): void;
  /** That attempt ended: its chunks are committed with its result, or discarded. */
  release?(runId: string, step: string, attempt: number): void;
  /** A backend that logs runs' events for every process tells the hub where (Restate). */
  useRemote?(remote: RemoteStepEvents): void;
}

/** Where the events of runs executed by other processes are (Restate: each run's event log,
 *  src/adapters/restate/event-log.ts). `from` absent: from now on, without what this
 *  process's own hub delivers; an offset: everything the log holds from it, in log order. */
export interface RemoteStepEvents {
  follow(runId: string, from: number | undefined, deliver: (event: StepEvent) => void): () => void;
}

/** The chunks a step body's attempt in flight wrote to one stream. */
export interface HeldChunks {
  step: string;
  attempt: number;
  chunks: Json[];
}

/** Emits one step event to `sink`, unless nobody follows the run or the log replays an earlier
 *  process's work (Restate replaying an invocation: that process reported it). The RunSession
 *  calls it in-process; the ChildObserver (src/adapters/deno) for a workflow file's run, whose
 *  session runs in its Deno child. */
export function emitStepEvent(
  sink: StepEventSink | undefined,
  log: Pick<StepLog, 'runId' | 'workflow' | 'now' | 'journalClock' | 'replaying'>,
  type: StepEventType,
  step: { name: string; kind: StepKind },
  extra?: Partial<StepEvent>,
): void {
  if (!sink || !sink.listening(log.runId) || log.replaying?.()) return;
  // A journaled clock (Restate) stands still between journal events: the process's own.
  const at = log.journalClock ? Date.now() : log.now();
  sink.emit(Object.assign({ type, runId: log.runId, workflow: log.workflow, step: step.name, kind: step.kind, at }, extra));
}

export class StepEvents implements StepEventSink {
  private readonly all = new Set<StepEventHandler>();
  private readonly byRun = new Map<string, Set<StepEventHandler>>();
  /** Per run, per stream: the chunks of the attempts in flight, so a provisional reader that
   *  comes in the middle of an attempt starts from its first chunk (the events before its
   *  subscription are gone). Only while the body runs: dropped when the attempt ends. */
  private readonly held = new Map<string, Map<string, HeldChunks[]>>();

  /** The events other processes log (set by a backend that keeps them: Restate). */
  private remote: RemoteStepEvents | undefined;

  constructor(private readonly logger?: Logger) {}

  useRemote(remote: RemoteStepEvents): void {
    this.remote = remote;
  }

  /** Whether one run's events can be read from an offset (a backend that logs them). */
  get logged(): boolean {
    return this.remote !== undefined;
  }

  /** `runId` absent: every run's events this process executes. A run's: its events here,
   *  and those other processes log. `from`: the run's logged events from that offset, then
   *  live, all from its log, in log order. Returns the function that unsubscribes. */
  subscribe(handler: StepEventHandler, runId?: string, from?: number): () => void {
    if (runId !== undefined && this.remote) {
      const remote = this.remote.follow(runId, from, (e) => this.call(handler, e));
      if (from !== undefined) return remote;
      const local = this.subscribeHere(handler, runId);
      return () => (remote(), local());
    }
    return this.subscribeHere(handler, runId);
  }

  private subscribeHere(handler: StepEventHandler, runId?: string): () => void {
    if (runId === undefined) {
      this.all.add(handler);
      return () => void this.all.delete(handler);
    }
    const set = this.byRun.get(runId) ?? new Set();
    set.add(handler);
    this.byRun.set(runId, set);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.byRun.get(runId) === set) this.byRun.delete(runId);
    };
  }

  hold(runId: string, stream: string, step: string, attempt: number, chunk: Json): void {
    const run = this.held.get(runId) ?? new Map<string, HeldChunks[]>();
    this.held.set(runId, run);
    const list = run.get(stream) ?? [];
    run.set(stream, list);
    let h = list.find((x) => x.step === step && x.attempt === attempt);
    if (!h) list.push((h = { step, attempt, chunks: [] }));
    h.chunks.push(chunk);
  }

  release(runId: string, step: string, attempt: number): void {
    const run = this.held.get(runId);
    if (!run) return;
    for (const [stream, list] of run) {
      const rest = list.filter((x) => x.step !== step || x.attempt !== attempt);
      if (rest.length > 0) run.set(stream, rest);
      else run.delete(stream);
    }
    if (run.size === 0) this.held.delete(runId);
  }

  /** The attempts in flight that wrote to `stream` of run `runId`, with their chunks so far. */
  inFlight(runId: string, stream: string): HeldChunks[] {
    return (this.held.get(runId)?.get(stream) ?? []).map((h) => ({ ...h, chunks: [...h.chunks] }));
  }

  listening(runId: string): boolean {
    return this.all.size > 0 || this.byRun.has(runId);
  }

  emit(event: StepEvent): void {
    const handlers = [...this.all, ...(this.byRun.get(event.runId) ?? [])];
    for (const h of handlers) this.call(h, event);
  }

  /** On its own microtask: a slow or throwing handler holds and breaks nothing. */
  private call(h: StepEventHandler, event: StepEvent): void {
    queueMicrotask(() => {
      try {
        const r = h(event);
        if (r && typeof (r as Promise<void>).catch === 'function') (r as Promise<void>).catch((err: unknown) => this.threw(event, err));
      } catch (err) {
        this.threw(event, err);
      }
    });
  }

  private threw(event: StepEvent, err: unknown): void {
    this.logger?.log('warn', `step event handler of ${event.type} for run ${event.runId} threw: ${(err as Error)?.message ?? String(err)}`);
  }
}
