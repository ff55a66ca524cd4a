// What a step body is given for one attempt (StepInfo): its attempt number, its idempotency
// key, and an AbortSignal made only if the body reads it.
//
// Why a class and a lazy signal, both measured on the 100 x 10-step hot path:
//  - an AbortController per attempt (an EventTarget and its signal) was ~2% of the engine's
//    CPU, and most bodies never read the signal;
//  - an object literal with its own `get signal()` gets a fresh accessor (and hidden class)
//    per attempt; V8 keeps those in old space, and every young object the getter's closure
//    reaches then survives scavenges until a full GC: ~40% of all the engine's garbage
//    survived, and each scavenge paused the host's event loop 5-15 ms. A getter on the
//    prototype is shared, so nothing per attempt outlives the attempt.
// `signal` is therefore not an own property: read it by name or destructure it; the own
// properties are `attempt` and `idempotencyKey`, as before.
// `log` is made the same way: on the prototype, built on first read; `stream` too (its
// chunks are held only once the body writes one).
import type { BodyStreamWriter, StepInfo, WorkflowLogger } from '../../sdk/types.ts';
import type { AttemptTrace } from '../ports/telemetry.ts';
import { NO_LOG } from './run-log.ts';
import { AttemptStreams, type BodyStreamHost } from './body-streams.ts';

/** Makes the logger of a step body's attempt (the session: its run's output and ids). */
export interface StepLoggers {
  stepLogger(step: string, attempt: number, trace: AttemptTrace | undefined): WorkflowLogger;
}

export class AttemptInfo implements StepInfo {
  // #private: the body's own view of this object ({ ...info }, JSON) is just the two fields.
  #ac: AbortController | undefined;
  #reason: unknown;
  #aborted = false;
  #logger: WorkflowLogger | undefined;
  #loggers: StepLoggers | undefined;
  #step: string | undefined;
  /** The attempt's span, for the log lines' ids. */
  #trace: AttemptTrace | undefined;
  #streamHost: BodyStreamHost | undefined;
  #streams: AttemptStreams | undefined;

  constructor(
    readonly attempt: number,
    readonly idempotencyKey: string,
    loggers?: StepLoggers,
    step?: string,
    streamHost?: BodyStreamHost,
  ) {
    this.#loggers = loggers;
    this.#step = step;
    this.#streamHost = streamHost;
  }

  /** The chunks the body wrote (info.stream), if it wrote any stream. */
  static streamsOf(info: AttemptInfo): AttemptStreams | undefined {
    return info.#streams;
  }

  /** A getter, like `signal` and `log`, so `({ stream }) => stream('tokens')` works. */
  get stream(): (name: string) => BodyStreamWriter {
    return (name: string) => {
      if (!this.#streamHost || this.#step === undefined) throw new Error('info.stream: this attempt has no stream host');
      return (this.#streams ??= new AttemptStreams(this.#streamHost, this.#step, this.attempt)).writer(name);
    };
  }

  /** The attempt's span was made (the body's log lines carry its ids). */
  traced(trace: AttemptTrace | undefined): void {
    this.#trace = trace;
  }

  get log(): WorkflowLogger {
    return (this.#logger ??= this.#loggers ? this.#loggers.stepLogger(this.#step!, this.attempt, this.#trace) : NO_LOG);
  }

  get signal(): AbortSignal {
    if (!this.#ac) {
      this.#ac = new AbortController();
      // Aborted before the body looked: the signal it gets is already aborted, same reason.
      if (this.#aborted) this.#ac.abort(this.#reason);
    }
    return this.#ac.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#ac?.abort(reason);
  }
}
