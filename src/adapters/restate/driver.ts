// The one awaiter of a Restate invocation. The Restate SDK (1.17) drives its journal from
// the promise being awaited, and lets only one RestatePromise wait for progress at a time:
// a second concurrent await fails with "awaitNext already pending" and the invocation
// stalls. Workflow code awaits many steps at once (Promise.all / race over step calls), so
// every await of the invocation goes through this driver: it races all pending promises as
// one RestatePromise, hands each outcome to its own caller, and races again after a turn of
// the event loop, so that calls the code makes in reaction join the next race.
//
// Restate journals the order in which the raced promises complete, so a replay hands the
// outcomes out in the same order as the first execution.
//
// The SDK settles one raced promise per step of its progress loop (it reads the journal up
// to the first outcome of a raced promise), and each step costs work in every promise raced
// (mapped, swept, serialized into the SDK's core): with n promises pending, n outcomes cost
// ~n^2 (a fan-out of 1,000 children took ~50 s, ~1,800,000 promises raced in all). Most of
// them are `quick`: commands that settle on their own once raced (the marker that opens a
// step, the peek of a signal, the body of a child's start or of ctx.signal: bounded bodies
// that wait for no other step). An `eager` driver (runs whose request says `driver: 1`,
// workflow-service.ts) races only the oldest WINDOW of those, beside every other pending
// promise (step bodies of the code, sleeps, signal waits, slots): which promises a race
// includes is still a function of the calls made, so a replay races the same sets and meets
// the same outcomes in the same order. A quick promise past the window waits until older
// ones settle, and nothing waits on it but its own caller. Runs started before race every
// pending promise: their journals were written that way, and a replay must race as they did.
//
// The SDK runs a ctx.run closure only when an awaited promise includes it: a step called
// while a race is in flight (the code awaited a timer, or a Deno child's frame arrived a
// turn later) would not start its body until that race settled, so bodies meant to run in
// parallel ran one after the other. A new caller therefore interrupts the race in flight:
// each race includes a local promise (no journal entry: the SDK ignores a const promise in
// the journal's futures) that the driver resolves, and the SDK's progress loop of the old
// race is woken so it ends before the next race (with every pending promise) begins.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import { CancelledError } from '../../domain/errors.ts';

interface Waiter {
  promise: restate.RestatePromise<unknown>;
  /** The promise mapped to a settled record, built once and reused by every race. */
  tagged?: restate.RestatePromise<Settled>;
  /** Settles on its own once raced (see the top): an eager driver races only the oldest
   *  WINDOW of these. */
  quick?: boolean;
  resolve(value: unknown): void;
  reject(reason: unknown): void;
}

type Settled = { w: Waiter; ok: true; value: unknown } | { w: Waiter; ok: false; failure: unknown };

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

const INTERRUPTED = Symbol('interrupted');

/** How many `quick` promises an eager driver races at once (the oldest pending ones). */
export const WINDOW = 64;

export class RestateDriver {
  private pending: Waiter[] = [];
  private running = false;
  private closed = false;

  /** Waiters pending when the last cancel arrived: their CancelledErrors are that cancel's,
   *  not a new one. */
  private cancelledTogether = new Set<Waiter>();
  /** Ends the race in flight (set while one is awaited and `nudge` is available). */
  private interrupt: (() => void) | undefined;
  /** Awaited before each race: the code's reactions to the last outcome have reached the
   *  journal (a Deno child's `idle`). Without it, the commands a child's frames make (set
   *  state of a record, the next ctx.run) landed before or after the next await depending on
   *  socket timing, and a replay of the invocation failed with a journal mismatch. */
  gate: (() => Promise<void>) | undefined;
  /** A promise raced along with every race while anything else is awaited (docs/control.md:
   *  the run's pause request), first in each race so that one already complete wins as it
   *  did the first time; it keeps no race going on its own. Set by watch(). */
  private watcher: Waiter | undefined;

  /** @param onCancelled told once per cancel Restate delivers to the invocation. Waiters it
   *  gives up reject with the engine's CancelledError. */
  /** @param nudge wakes the SDK's progress loop (which may wait for outside progress) so an
   *  interrupted race's loop ends; without it, races are not interrupted. */
  constructor(
    private readonly onCancelled: () => void,
    private readonly nudge?: () => boolean,
  ) {}

  /** Races only a window of the quick promises (see the top). Set by the run handler from
   *  the run request, before anything is awaited. */
  eager = false;

  private cancelled(waiters: Iterable<Waiter>, w?: Waiter): CancelledError {
    if (!w || !this.cancelledTogether.has(w)) {
      this.cancelledTogether = new Set(waiters);
      this.onCancelled();
    }
    return new CancelledError('the run was cancelled');
  }

  /** Awaits a RestatePromise of this invocation alongside every other pending one. */
  await<T>(promise: restate.RestatePromise<T>, quick = false): Promise<T> {
    if (this.closed) return new Promise<T>(() => {});
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ promise, resolve: resolve as (v: unknown) => void, reject, ...(quick && this.eager ? { quick } : {}) });
      if (!this.running) {
        this.running = true;
        void this.loop();
      } else this.interrupt?.(); // the race in flight does not include this promise
    });
  }

  /** Races `promise` along with whatever is awaited from now on, until it settles: then
   *  `onSettled` gets its value (a failure drops it; a cancel is counted as any). Replaces
   *  the promise watched before. */
  watch<T>(promise: restate.RestatePromise<T>, onSettled: (value: T) => void): void {
    this.watcher = { promise, resolve: onSettled as (v: unknown) => void, reject: () => {} };
  }

  /** The invocation is over: nothing more is awaited (pending callers never settle). */
  close(): void {
    this.closed = true;
    this.pending = [];
  }

  /** What a race includes: the watcher, then the pending promises in call order; an eager
   *  driver leaves out the `quick` ones past the oldest WINDOW of them. */
  private raceable(watcher: Waiter | undefined, batch: Waiter[]): Waiter[] {
    const out = watcher ? [watcher] : [];
    let quick = 0;
    for (const w of batch) if (!w.quick || quick++ < WINDOW) out.push(w);
    return out;
  }

  private race(tagged: restate.RestatePromise<Settled>[]): Promise<Settled | typeof INTERRUPTED> {
    if (!this.nudge) return tagged.length === 1 ? tagged[0]! : restate.RestatePromise.race(tagged);
    let wake!: () => void;
    const woken = new Promise<typeof INTERRUPTED>((r) => (wake = () => r(INTERRUPTED)));
    this.interrupt = () => {
      this.interrupt = undefined;
      // Only once the SDK's loop can be woken: otherwise it would still wait for outside
      // progress when the next race starts its own loop ("awaitNext already pending").
      if (this.nudge!()) wake();
    };
    // RestatePromise.resolve of a plain promise: settles with it, and is no journal future.
    const local = restate.RestatePromise.resolve(woken) as unknown as restate.RestatePromise<typeof INTERRUPTED>;
    const all = restate.RestatePromise.race<(restate.RestatePromise<Settled> | restate.RestatePromise<typeof INTERRUPTED>)[]>([...tagged, local]);
    return (all as Promise<Settled | typeof INTERRUPTED>).finally(() => (this.interrupt = undefined));
  }

  private async loop(): Promise<void> {
    try {
      while (this.pending.length > 0 && !this.closed) {
        await turn();
        if (this.gate) await this.gate();
        if (this.closed) return;
        const batch = this.pending.slice();
        if (batch.length === 0) break;
        let settled: Settled;
        const watcher = this.watcher;
        try {
          const tagged = this.raceable(watcher, batch).map((w) =>
            (w.tagged ??= w.promise.map((value, failure): Settled => (failure === undefined ? { w, ok: true, value } : { w, ok: false, failure }))),
          );
          const raced = await this.race(tagged);
          if (raced === INTERRUPTED) continue; // race again, with the newcomers
          settled = raced;
        } catch (err) {
          // Not one promise's outcome (the invocation was cancelled or the SDK failed): it
          // concerns every caller waiting now.
          const all = this.pending;
          this.pending = [];
          if (this.watcher === watcher) this.watcher = undefined;
          const reason = err instanceof restate.CancelledError ? this.cancelled(all) : err;
          for (const w of all) w.reject(reason);
          continue;
        }
        if (this.closed) return;
        const waiter = settled.w;
        if (waiter === watcher) {
          if (this.watcher === watcher) this.watcher = undefined;
          if (settled.ok) waiter.resolve(settled.value);
          else if (settled.failure instanceof restate.CancelledError) this.cancelled(batch, waiter);
          continue;
        }
        this.pending.splice(this.pending.indexOf(waiter), 1);
        if (settled.ok) waiter.resolve(settled.value);
        else if (settled.failure instanceof restate.CancelledError) waiter.reject(this.cancelled(batch, waiter));
        else waiter.reject(settled.failure);
      }
    } finally {
      this.running = false;
      // A caller that arrived while the loop was finishing its last step.
      if (this.pending.length > 0 && !this.closed) {
        this.running = true;
        void this.loop();
      }
    }
  }
}
