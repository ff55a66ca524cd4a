// The StepLog port inside one Restate invocation of a run. It makes no replay decisions:
// the shared RunSession does; this maps what the session asks onto Restate's journal.
//
// Journal shape per step position p: the step's first record is a `ctx.run('s<p>')` (a do
// step's first attempt, or a marker carrying kind and name for the other kinds), so the
// session learns which step was recorded there and reports a changed workflow itself,
// with our position and names, before Restate's own journal check would stall the
// invocation; later attempts are `ctx.run('s<p>.<n>')`. Every outcome is a journaled
// result, never a thrown error Restate would retry.
//
// The session is re-run from the top after every suspension (as on SQLite); the entries it
// replays from are kept here, in memory, as JSON text: each session gets fresh copies, and
// a Restate replay of the invocation rebuilds them from the same journaled results.
// Steps are mirrored into workflow state (`~s<p>`) for the views the engine reads over SQL.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import type { ErrorInfo } from '../../domain/errors.ts';
import { toStepView, type JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import type { StepCall } from '../../domain/replay.ts';
import type { StepView } from '../../domain/run-view.ts';
import type { AttemptResult, Recorded, StepLog } from '../../ports/step-log.ts';

/** A position's record as journaled in ctx.run results. */
interface Marker {
  k: Recorded['kind'];
  n: string;
  /** Wall time when it was journaled: the run's clock moves with journaled times only. */
  t: number;
}

type AttemptRecord = Marker & (
  | { ok: true; v?: Json }
  | { ok: false; error: ErrorInfo; terminal: boolean; fatal?: boolean }
);

/** A signal as the `signal` handler stores it in the durable promise `evt:<name>#<slot>`. */
export interface SignalEnvelope {
  v: Json;
  t: number;
}

export const signalPromise = (name: string, slot: number): string => `evt:${name}#${slot}`;

export interface RestateStepLogHooks {
  /** Publishes an event (dedup by id); called inside a journaled ctx.run. */
  emit(req: { name: string; payload: Json; id: string }): Promise<unknown>;
  /** A step's view changed (mirrored into workflow state). */
  stepChanged(step: StepView): void;
}

export class RestateStepLog implements StepLog {
  entries: readonly JournalEntry[] = [];
  input: Json = null;
  /** Set when Restate cancelled the invocation: the session starts no further step. */
  cancelled = false;
  private readonly stored: string[] = [];
  /** The next signal slot each wait of a name takes (moves only on receipt, so after a
   *  timeout the next wait of that name takes the same slot: a late signal goes there). */
  private readonly cursors = new Map<string, number>();
  private clock: number;

  constructor(
    private readonly rctx: restate.WorkflowContext,
    readonly workflow: string,
    private readonly inputText: string,
    startedAt: number,
    private readonly hooks: RestateStepLogHooks,
  ) {
    this.clock = startedAt;
  }

  get runId(): string {
    return this.rctx.key;
  }

  /** Fresh copies of input and entries for the next session (workflow code may mutate them). */
  beginSession(): void {
    this.input = JSON.parse(this.inputText) as Json;
    this.entries = this.stored.map((text) => JSON.parse(text) as JournalEntry);
  }

  /** runs.retry: forgets the entries from `seq` on; the code meets those steps anew. */
  truncate(seq: number): void {
    if (this.stored.length > seq) this.stored.length = seq;
  }

  /** Restate cannot journal synchronously: the clock is the time of the last journaled
   *  event (run start, a step's record, a sleep's due time, a signal's arrival). */
  now(): number {
    return this.clock;
  }

  /** Moves the clock forward to a journaled time. */
  advance(t: number): void {
    this.clock = Math.max(this.clock, t);
  }

  random(): number {
    return this.rctx.rand.random();
  }

  open(call: StepCall): Promise<Recorded> {
    return this.mark(`s${call.seq}`, { k: call.kind, n: call.name });
  }

  close(position: number): Promise<Recorded> {
    return this.mark(`s${position}`, { k: 'end', n: '(end)' });
  }

  async attempt(call: StepCall, attempt: number, run: () => Promise<AttemptResult>): Promise<AttemptResult & { recorded: Recorded }> {
    const name = attempt === 1 ? `s${call.seq}` : `s${call.seq}.${attempt}`;
    const m = await this.journaled<AttemptRecord>(name, async () => {
      const r = await run();
      // The JSON text stays out of the journal: the value is journaled once.
      const rec = r.ok ? (r.value === undefined ? { ok: true as const } : { ok: true as const, v: r.value }) : r;
      return { ...rec, k: call.kind, n: call.name, t: Date.now() };
    });
    const recorded = { kind: m.k, name: m.n };
    if (!m.ok) return { ok: false, error: m.error, terminal: m.terminal, fatal: m.fatal, recorded };
    return m.v === undefined ? { ok: true, recorded } : { ok: true, value: m.v, recorded };
  }

  async record(entry: JournalEntry): Promise<void> {
    const text = JSON.stringify(entry);
    this.stored[entry.seq] = text;
    this.hooks.stepChanged(toStepView(JSON.parse(text) as JournalEntry));
  }

  async takeSignal(signalName: string, entry: JournalEntry): Promise<{ payload: Json } | undefined> {
    const slot = this.cursors.get(signalName) ?? 1;
    const got = await this.durable(this.rctx.promise<SignalEnvelope>(signalPromise(signalName, slot)).peek());
    if (got === undefined) return undefined;
    this.cursors.set(signalName, slot + 1);
    this.advance(got.t);
    await this.record({ ...entry, result: got.v, endedAt: this.clock });
    return { payload: got.v };
  }

  async emit(entry: JournalEntry, event: { name: string; payload: Json; id: string }): Promise<Recorded> {
    const m = await this.journaled<Marker>(`s${entry.seq}`, async () => {
      await this.hooks.emit(event);
      return { k: entry.kind, n: entry.name, t: Date.now() };
    });
    if (m.k === entry.kind && m.n === entry.name) await this.record({ ...entry, startedAt: m.t, endedAt: m.t });
    return { kind: m.k, name: m.n };
  }

  cancelRequested(): boolean {
    return this.cancelled;
  }

  /** Waits until the suspended run can go on: its wake time, or the next signal of a name
   *  one of its waits takes, whichever comes first. */
  async suspend(wakeAt: number | undefined, signals: readonly string[]): Promise<void> {
    const branches: restate.RestatePromise<number>[] = [];
    if (wakeAt !== undefined) branches.push(this.rctx.sleep(Math.max(0, wakeAt - Date.now())).map(() => wakeAt));
    for (const signal of signals) {
      const slot = this.cursors.get(signal) ?? 1;
      branches.push(this.rctx.promise<SignalEnvelope>(signalPromise(signal, slot)).get().map((env) => env?.t ?? 0));
    }
    if (branches.length === 0) throw new Error('suspended with nothing to wake it');
    this.advance(await this.durable(branches.length === 1 ? branches[0]! : restate.RestatePromise.race(branches)));
  }

  private async mark(name: string, marker: Omit<Marker, 't'>): Promise<Recorded> {
    const m = await this.journaled<Marker>(name, () => ({ ...marker, t: Date.now() }));
    return { kind: m.k, name: m.n };
  }

  private async journaled<T extends Marker>(name: string, produce: () => Promise<T> | T): Promise<T> {
    const m = await this.durable(this.rctx.run(name, produce));
    this.advance(m.t);
    return m;
  }

  /** A cancellation surfaces from whatever the invocation awaits: remember it. */
  private async durable<T>(p: PromiseLike<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof restate.CancelledError) this.cancelled = true;
      throw err;
    }
  }
}
