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
import type { StepInfo } from '../../sdk/types.ts';

export class AttemptInfo implements StepInfo {
  // #private: the body's own view of this object ({ ...info }, JSON) is just the two fields.
  #ac: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  constructor(
    readonly attempt: number,
    readonly idempotencyKey: string,
  ) {}

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
