// The completion-order gate of one session: step results reach workflow code in the order
// the steps completed (JournalEntry.order), on first execution and on replay alike. Steps
// called concurrently may complete in any order; a Promise.race must pick the same winner
// on replay as the first time, whatever the depth of the promise chain each result travels.
// While other step calls are pending, one result goes per turn of the event loop, so the
// code's reaction to one runs (and makes its calls) before the next arrives. A second result
// goes in the same turn only for a step called after the turn's last release (sequential
// code: the reaction to that release called it) with no other step call pending; one called
// before it waits a turn, as it does on replay, where its recorded result is held until the
// next turn: released at once on first execution, it raced the earlier release's reaction at
// microtask depth, and the code called its next steps in another order (seed 946221).

import { ChurnMap } from './churn-map.ts';

export interface CompletionOrderHooks {
  /** Step calls whose promise has not settled, the one asking included. */
  unsettled(): number;
  /** A result was handed to the code (a quiescence check seeing it knows a branch moved). */
  moved(): void;
  /** A result is held: the session may now be waiting only on held results. */
  held(): void;
  /** The turn in which results were handed back ended (before the next is released). */
  turnEnded(): void;
  /** The position the session's next step call gets (positions follow call order). */
  position(): number;
}

export class CompletionOrder {
  /** Orders recorded before this session, ascending: released first, in this order. */
  private readonly recorded: number[];
  private released = 0;
  private nextOrder: number;
  /** Orders handed out in this session and not yet delivered or given up: open[0..openCount),
   *  ascending (next() hands them out in order). Kept in place, never shrunk: no table to
   *  rehash and nothing allocated per step (a Set rehashed every few steps; an array emptied
   *  and refilled got a new backing store on every step). */
  private readonly open: number[] = [];
  private openCount = 0;
  /** A ChurnMap, not a Map: a long session churns it once per held result (churn-map.ts). */
  private readonly waiting = new ChurnMap<() => void>();
  /** Recorded orders given up by skipHead: their results go at once if the code asks late.
   *  Made on first use: a Set lived (and was copied by every scavenge) with each run. */
  private skipped: Set<number> | undefined;
  /** A result was handed back this turn of the event loop: the next one waits a turn. */
  private releasedThisTurn = false;
  /** The session's next position when the last result was handed back: a step at or past
   *  it was called after that release. */
  private releasedAt = 0;
  /** A result of this session's own (none recorded before it) reached the code: the code
   *  from here on runs for the first time (ctx.log writes its lines). */
  deliveredNew = false;

  constructor(
    recordedOrders: readonly (number | undefined)[],
    private readonly hooks: CompletionOrderHooks,
  ) {
    this.recorded = recordedOrders.flatMap((o) => (o === undefined ? [] : [o])).sort((a, b) => a - b);
    this.nextOrder = (this.recorded[this.recorded.length - 1] ?? 0) + 1;
  }

  /** Results held for their turn. */
  get heldCount(): number {
    return this.waiting.size;
  }

  /** The next order, for a step whose outcome is known now (or, for a wait, is about to be
   *  looked for). Every order handed out is delivered (gate) or given up (abandon). */
  next(): number {
    const order = this.nextOrder++;
    this.open[this.openCount++] = order;
    return order;
  }

  /** Waits for this result's turn; undefined when it may go at once. `position`: the step's
   *  position (its call's place in call order). */
  gate(order: number | undefined, position: number): Promise<void> | undefined {
    if (order === undefined) return undefined;
    // Skipped while the code waited on something that is not a step (a plain timer): its
    // turn is gone, so holding it would hang the code forever.
    if (this.skipped?.delete(order)) {
      this.hooks.moved();
      return undefined;
    }
    // `unsettled` counts the asking call too: more than one means other branches are pending.
    if (order === this.head() && !(this.releasedThisTurn && (this.hooks.unsettled() > 1 || position < this.releasedAt))) {
      this.delivered(order);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      this.waiting.set(order, resolve);
      this.hooks.held();
    });
  }

  /** An order handed out whose result never reaches the code (a wait found no signal). */
  abandon(order: number): void {
    this.close(order);
    if (!this.releasedThisTurn) this.releaseNext();
  }

  /** The result due next belongs to a step the code no longer calls (a changed workflow):
   *  skip it rather than hold every later result forever. */
  skipHead(): void {
    if (this.released < this.recorded.length) (this.skipped ??= new Set()).add(this.recorded[this.released++]!);
    else {
      const h = this.head();
      if (h !== undefined) this.close(h);
    }
    this.hooks.moved();
    this.releaseNext();
  }

  /** The order whose result goes next: recorded ones first (replay), then this session's. */
  private head(): number | undefined {
    if (this.released < this.recorded.length) return this.recorded[this.released];
    return this.openCount > 0 ? this.open[0] : undefined;
  }

  private close(order: number): void {
    const open = this.open;
    const n = this.openCount;
    let i = 0;
    while (i < n && open[i] !== order) i++;
    if (i === n) return;
    for (; i < n - 1; i++) open[i] = open[i + 1]!;
    this.openCount = n - 1;
  }

  private delivered(order: number): void {
    if (this.released < this.recorded.length) this.released++;
    else {
      this.close(order);
      this.deliveredNew = true;
    }
    this.releasedAt = this.hooks.position();
    this.hooks.moved();
    if (this.releasedThisTurn) return;
    this.releasedThisTurn = true;
    endOfTurn(this);
  }

  /** The turn in which this gate handed a result back has ended: the next may go. */
  turnEnded(): void {
    this.releasedThisTurn = false;
    this.hooks.turnEnded();
    this.releaseNext();
  }

  /** Releases the held result whose turn came, if any. */
  private releaseNext(): void {
    const order = this.head();
    const resolve = order === undefined ? undefined : this.waiting.get(order);
    if (!resolve) return;
    this.waiting.delete(order!);
    this.delivered(order!);
    resolve();
  }
}

// One setImmediate per turn of the event loop for every gate that handed a result back in
// it, not one per result: with many runs in flight that was an Immediate, its closure and a
// pass of the immediate queue per step. Gates of different sessions share nothing, so ending
// their turns in one callback changes the order of no session's results.
let endingTurn: CompletionOrder[] = [];

function endOfTurn(order: CompletionOrder): void {
  if (endingTurn.push(order) === 1) setImmediate(endTurns);
}

function endTurns(): void {
  const gates = endingTurn;
  endingTurn = [];
  for (const g of gates) g.turnEnded();
}
