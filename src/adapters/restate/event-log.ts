// Step events across Restate replicas (docs/live-output.md, "Where they are seen"): the
// executing process appends the events its sessions emit to the run's log in Restate
// (event-log-object.ts), and a subscriber on any replica follows that log by offset with
// long-polls. Appends of one run leave this process one batch at a time, in emission order
// (what is emitted while one is in the log's hands goes in the next), off the run's path: a
// run never waits for its events to be logged.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../ports/logger.ts';
import type { Json } from '../../domain/json.ts';
import type { RemoteStepEvents, StepEvent, StepEventSink } from '../../runtime/step-events.ts';
import { EVENT_LOG_OBJECT, MAX_WAIT_MS, type EventPage, type LoggedEvent } from './event-log-object.ts';
import { httpJson } from './http-json.ts';
import { retryWhileUnknown } from './deployments.ts';

/** A run's first event waits this long for the next ones, to go in one append with them.
 *  Appends are calls (not `/send`): the next batch leaves once the last one is in the log, so
 *  a run emitting faster than the log takes its events batches more instead of queueing
 *  appends in Restate (with `/send` a follower on another replica lagged ~180 ms behind). */
const LINGER_MS = 5;
/** Events of one run per append request at most. */
const MAX_BATCH = 200;
/** A failed append is tried again this many times (a second apart) before its events are dropped. */
const APPEND_TRIES = 5;
/** One follower's long-poll parks this long in Restate. */
const FOLLOW_WAIT_MS = 25_000;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logUrl = (ingress: string, runId: string, handler: string) => `${ingress}/${EVENT_LOG_OBJECT}/${encodeURIComponent(runId)}/${handler}`;

/** The sink the Restate executor gives its sessions: the process's own hub (`local`, for
 *  subscribers here, at once) and the run's log in Restate (for every replica). */
export class EventLogWriter implements StepEventSink {
  /** Names this process in what it logs: its own subscribers had those events from `local`. */
  readonly origin = randomUUID();
  private readonly queues = new Map<string, LoggedEvent[]>();
  private readonly sending = new Map<string, Promise<void>>();

  constructor(
    private readonly local: StepEventSink | undefined,
    private readonly ingress: () => string,
    private readonly logger?: Logger,
  ) {}

  /** Always: the log keeps every run's events, for a reader from offset 0 on any replica. */
  listening(): boolean {
    return true;
  }

  emit(event: StepEvent): void {
    if (this.local?.listening(event.runId)) this.local.emit(event);
    const q = this.queues.get(event.runId) ?? [];
    this.queues.set(event.runId, q);
    q.push({ o: this.origin, e: event });
    if (!this.sending.has(event.runId)) this.sending.set(event.runId, this.send(event.runId));
  }

  hold(runId: string, stream: string, step: string, attempt: number, chunk: Json): void {
    this.local?.hold?.(runId, stream, step, attempt, chunk);
  }

  release(runId: string, step: string, attempt: number): void {
    this.local?.release?.(runId, step, attempt);
  }

  /** The engine stops: what failed to be logged from now on is dropped at once, quietly. */
  private closing = false;

  /** Waits (bounded) for what is queued to be logged: before the engine stops. */
  async drain(timeoutMs = 5000): Promise<void> {
    await Promise.race([Promise.all([...this.sending.values()]), pause(timeoutMs)]);
    this.closing = true;
  }

  private async send(runId: string): Promise<void> {
    await pause(LINGER_MS);
    for (;;) {
      const q = this.queues.get(runId);
      if (!q || q.length === 0) break;
      const batch = q.splice(0, MAX_BATCH);
      for (let tried = 1; ; tried++) {
        const r = await retryWhileUnknown(() => httpJson('POST', logUrl(this.ingress(), runId, 'append'), { events: batch })).catch((err: Error) => ({ ok: false, status: 0, text: err.message }));
        if (r.ok) break;
        if (tried >= APPEND_TRIES || r.status === 400 || this.closing) {
          this.logger?.log(this.closing ? 'debug' : 'warn', `logging ${batch.length} step events of run ${runId} in Restate failed (${r.status}: ${r.text.slice(0, 200)}); subscribers on other replicas miss them`);
          break;
        }
        await pause(1000);
      }
    }
    this.queues.delete(runId);
    this.sending.delete(runId);
  }
}

/** Follows runs' logs for the subscribers of this process (StepEvents.useRemote). */
export class EventLogReader implements RemoteStepEvents {
  constructor(
    private readonly ingress: () => string,
    /** This process's writer's origin: live followers skip what its hub already delivered. */
    private readonly origin?: string,
    private readonly logger?: Logger,
  ) {}

  follow(runId: string, from: number | undefined, deliver: (event: StepEvent) => void): () => void {
    const stop = new AbortController();
    const skipOwn = from === undefined;
    void (async () => {
      let next = from;
      let warned = false;
      while (!stop.signal.aborted) {
        try {
          if (next === undefined) {
            next = await this.end(runId, stop.signal);
            continue;
          }
          const page = await this.read(runId, next, FOLLOW_WAIT_MS, stop.signal, skipOwn ? this.origin : undefined);
          warned = false;
          if (stop.signal.aborted) return;
          for (const l of page.events) if (!skipOwn || l.o !== this.origin) deliver(l.e);
          next = page.next;
        } catch (err) {
          if (stop.signal.aborted) return;
          if (!warned) this.logger?.log('warn', `following the step events of run ${runId} in Restate failed (${(err as Error).message}); trying again every second`);
          warned = true;
          await pause(1000);
        }
      }
    })();
    return () => stop.abort();
  }

  /** One read of the log from `from`, parking up to waitMs for news (events of process
   *  `skip` alone are none: a reader in the executing process is not woken by its own). */
  read(runId: string, from: number, waitMs: number, signal?: AbortSignal, skip?: string): Promise<EventPage> {
    return this.call<EventPage>(runId, 'wait', { from, waitMs: Math.min(waitMs, MAX_WAIT_MS), ...(skip ? { skip } : {}) }, waitMs, signal);
  }

  /** The log's end, once what was sent to it before is in. */
  end(runId: string, signal?: AbortSignal): Promise<number> {
    return this.call<number>(runId, 'end', null, 0, signal);
  }

  private async call<T>(runId: string, handler: string, body: unknown, waitMs: number, signal?: AbortSignal): Promise<T> {
    const bound = AbortSignal.timeout(waitMs + 15_000);
    const r = await fetch(logUrl(this.ingress(), runId, handler), {
      method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      signal: signal ? AbortSignal.any([signal, bound]) : bound,
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`restate answered ${r.status}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }
}
