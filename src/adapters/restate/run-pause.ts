// Pause and resume of a run on Restate (docs/control.md). The engine asks through the run's
// shared handlers `pause` / `resume` (pause-handlers.ts), which resolve durable promises of
// the run's current pause cycle k: `~pause#k` with who asked, `~resume#k` with when. The run
// handler sees a pause in journaled order, so a replay decides as the first execution did:
// - while it executes, `~pause#k` is raced along with every await of the invocation (the
//   driver's watch); once it is seen, the session starts no further step (pauseRequested)
//   and suspends when what is in flight is recorded;
// - while it is suspended (sleeping, waiting, parked), `~pause#k` is one of the branches
//   that wake it.
// Then the handler shows `paused` and waits on `~resume#k` only: a timer or a signal that
// comes meanwhile is kept (a signal in its slot) and taken when the run goes on, its clock
// moved to the resume's journaled time. A cancel while paused goes on as any cancel (the
// session throws it where the code waits, cleanup runs). Restate suspends the waiting
// handler after its inactivity timeout: a paused run holds no endpoint stream.
import './polyfill.ts';
import type * as restate from '@restatedev/restate-sdk';
import { CancelledError } from '../../domain/errors.ts';
import type { PauseInfo } from '../../domain/run-control.ts';
import type { RestateDriver } from './driver.ts';

export const pausePromise = (k: number): string => `~pause#${k}`;
export const resumePromise = (k: number): string => `~resume#${k}`;
/** Workflow state: the pause cycle the run handler watches now (absent: 0). Only the run
 *  handler writes state; the shared handlers also skip cycles both resolved (a resume the
 *  run has not taken yet). */
export const PAUSE_CYCLE = '~pausek';

/** What `~pause#k` holds: who asked, and when (the handler's journaled time, epoch ms). */
export interface PauseNote {
  by: string;
  t: number;
  /** Noted by the workflow's pause before the run's code ran (workflow-pause-object.ts). */
  held?: true;
}

/** What `~resume#k` holds: when the resume was asked (the run's clock moves to it). */
export interface ResumeNote {
  t: number;
  /** workflows.resume with held: 'skip': the held run ends skipped, for this reason. */
  skip?: string;
}

/** What the pause needs of the run handler. */
export interface PauseHost {
  readonly ctx: restate.WorkflowContext;
  readonly driver: RestateDriver;
  /** The run shows `paused` with who asked and when. */
  showPaused(info: PauseInfo): void;
  /** The run's clock moves to a journaled time. */
  advance(t: number): void;
}

/** The pause of one invocation of a run: the cycle it watches and whether a pause was seen. */
export class RunPause {
  private k = 0;
  private seen: PauseNote | undefined;

  constructor(private readonly host: PauseHost) {}

  /** Starts watching the current cycle's `~pause#k` (at the handler's start and after each
   *  resume: a deterministic place in the journal). */
  watch(): void {
    const k = this.k;
    this.host.driver.watch(this.host.ctx.promise<PauseNote>(pausePromise(k)).get(), (note) => {
      if (this.k === k) this.seen = note;
    });
  }

  /** A cancelled run continues (run-continue.ts): a pause asked before its cancel is spent;
   *  a new cycle is watched. */
  renew(): void {
    this.k++;
    this.seen = undefined;
    this.host.ctx.set(PAUSE_CYCLE, this.k);
    this.watch();
  }

  /** A pause was seen in this cycle: no further step starts. */
  requested(): boolean {
    return this.seen !== undefined;
  }

  /** A branch for the race of a suspension: settles with the time the pause was asked. */
  branch(): restate.RestatePromise<number> {
    const k = this.k;
    return this.host.ctx.promise<PauseNote>(pausePromise(k)).get().map((note) => {
      if (this.k === k && note) this.seen = note;
      return note?.t ?? 0;
    });
  }

  /** Paused: shows it, then waits for the resume (or a cancel, which the caller's next
   *  session delivers); the next cycle is watched after it. */
  async hold(): Promise<'resumed' | 'cancelled' | { skip: string }> {
    const { ctx, driver } = this.host;
    const k = this.k;
    const note = this.seen ?? (await driver.await(ctx.promise<PauseNote>(pausePromise(k)).get()));
    this.host.showPaused({ by: note.by, at: new Date(note.t).toISOString(), ...(note.held ? { held: true as const } : {}) });
    let how: 'resumed' | 'cancelled' | { skip: string } = 'resumed';
    try {
      const resumed = await driver.await(ctx.promise<ResumeNote>(resumePromise(k)).get());
      if (typeof resumed?.t === 'number') this.host.advance(resumed.t);
      if (typeof resumed?.skip === 'string') how = { skip: resumed.skip };
    } catch (err) {
      if (!(err instanceof CancelledError)) throw err;
      how = 'cancelled';
    }
    this.k = k + 1;
    this.seen = undefined;
    ctx.set(PAUSE_CYCLE, this.k);
    // After a cancel a pause is refused: nothing more to watch.
    if (how === 'resumed') this.watch();
    return how;
  }
}
