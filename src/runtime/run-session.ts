// One execution of a run: calls the workflow function with a StepApi backed by the run's
// journal. Each step call asks the pure decide() what to do; recorded steps replay, the
// first unrecorded one executes. The session ends with a RunOutcome the moment the run
// finishes, fails, suspends or is cancelled; workflow code still awaiting then is left
// on a promise that never settles (so a user's try/catch cannot swallow a suspension).
import {
  NonDeterminismError, TimeoutError, ValidationError, fromErrorInfo, toErrorInfo,
} from '../domain/errors.ts';
import type { JournalEntry } from '../domain/journal.ts';
import { roundTrip, toJsonText, type Json } from '../domain/json.ts';
import { decide, decideFinish, type Decision, type StepCall } from '../domain/replay.ts';
import { decideRetry } from '../domain/retry-policy.ts';
import type { StepKind } from '../domain/run-view.ts';
import { StepNamer, idempotencyKey } from '../domain/step-names.ts';
import type { RunJournal } from '../ports/run-journal.ts';
import { resolveStepOptions } from '../../sdk/step-options.ts';
import type { EmitOptions, StepApi, StepBody, StepOptions, WorkflowContext, WorkflowFn } from '../../sdk/types.ts';
import type { RunOutcome } from './run-outcome.ts';
import { stepApi } from './step-api.ts';
import { withTimeout } from './with-timeout.ts';

/** A promise that never settles. Fresh per call: a shared one would keep every awaiting
 *  continuation (and the run state it closes over) reachable forever. */
const never = <T = never>(): Promise<T> => new Promise<T>(() => {});

class Finished extends Error {}

/** The JSON text of a recorded entry's result, when the session already produced it: the
 *  store writes it as is instead of serialising the parsed value a second time. Keyed by the
 *  entry object, so a copied or altered entry falls back to serialising its result. */
export const resultTextOf = new WeakMap<JournalEntry, string>();

export class RunSession {
  private seq = 0;
  private readonly namer = new StepNamer();
  private outcome: RunOutcome | undefined;
  private settle!: (o: RunOutcome) => void;
  private readonly done = new Promise<RunOutcome>((r) => (this.settle = r));
  private bodyRunning = false;
  private pendingWrites: Promise<void>[] = [];

  constructor(
    private readonly journal: RunJournal,
    private readonly fn: WorkflowFn,
    private readonly stepDefaults?: StepOptions,
  ) {}

  /** Runs the workflow until it finishes, fails, suspends or is cancelled. */
  run(): Promise<RunOutcome> {
    const step = this.stepApi();
    const ctx = this.context();
    void (async () => {
      try {
        const output = await this.fn({ input: this.journal.input, step, ctx });
        if (this.outcome) return;
        await this.flushPending();
        const fin = decideFinish(this.journal.entries, this.seq);
        if (fin.type === 'diverged') return this.diverged(fin);
        if (this.journal.cancelRequested()) return this.finish({ type: 'cancelled' });
        let out: Json;
        try {
          out = roundTrip(output, `workflow '${this.journal.workflow}' output`) as Json;
        } catch (err) {
          return this.finish({ type: 'failed', error: toErrorInfo(err) });
        }
        this.finish({ type: 'succeeded', output: out });
      } catch (err) {
        if (this.outcome || err instanceof Finished) return;
        await this.flushPending().catch(() => {});
        this.finish({ type: 'failed', error: toErrorInfo(err) });
      }
    })();
    return this.done;
  }

  private finish(o: RunOutcome): void {
    if (this.outcome) return;
    this.outcome = o;
    this.settle(o);
  }

  private diverged(d: { position: number; expected: string; recorded: string }): void {
    const err = new NonDeterminismError(this.journal.runId, d.position, d.expected, d.recorded);
    this.finish({ type: 'failed', error: toErrorInfo(err) });
  }

  /** Common entry of every step call: boundary checks, naming, and the replay decision. */
  private begin(kind: StepKind, rawName: string): { call: StepCall; decision: Decision } | undefined {
    if (this.outcome) return undefined;
    if (this.bodyRunning) {
      throw new ValidationError(`step.${kind === 'do' ? 'do' : kind}('${String(rawName)}') called inside a step.do body: steps cannot nest`);
    }
    const name = this.namer.next(rawName);
    if (this.journal.cancelRequested()) {
      this.finish({ type: 'cancelled' });
      return undefined;
    }
    const call: StepCall = { seq: this.seq++, kind, name };
    const decision = decide(this.journal.entries, call, this.journal.now());
    if (decision.type === 'diverged') {
      this.diverged(decision);
      return undefined;
    }
    return { call, decision };
  }

  private async flushPending(): Promise<void> {
    const writes = this.pendingWrites;
    this.pendingWrites = [];
    await Promise.all(writes);
  }

  private stepApi(): StepApi {
    return stepApi({
      do: (name, options, body) => this.doStep(name, options, body),
      sleep: (name, wakeAtFrom) => this.sleepStep(name, wakeAtFrom),
      wait: (name, timeoutMs) => this.waitStep(name, timeoutMs),
    });
  }

  private context(): WorkflowContext {
    const self = this;
    return {
      runId: this.journal.runId,
      workflow: this.journal.workflow,
      now: () => self.journaledValue('now', 'ctx.now', () => self.journal.now()),
      random: () => self.journaledValue('random', 'ctx.random', () => self.journal.random()),
      emit: (name: string, payload?: Json, options?: EmitOptions) => self.emitStep(name, payload ?? null, options),
    };
  }

  /** ctx.now()/ctx.random() are synchronous: the value is returned at once and its entry
   *  is written in the background, flushed before any step body runs or the run ends. */
  private journaledValue(kind: 'now' | 'random', name: string, produce: () => number): number {
    const started = this.begin(kind, name);
    if (!started) throw new Finished('run finished');
    const { call, decision } = started;
    if (decision.type === 'replay') return decision.entry.result as number;
    const value = produce();
    const t = this.journal.now();
    const write = this.journal.record({ seq: call.seq, name: call.name, kind, status: 'succeeded', attempts: 1, result: value, startedAt: t, endedAt: t });
    write.catch(() => {});
    this.pendingWrites.push(write);
    return value;
  }

  private async doStep<T>(rawName: string, options: StepOptions | undefined, body: StepBody<T>): Promise<T> {
    const started = this.begin('do', rawName);
    if (!started) return never();
    const { call, decision } = started;
    if (decision.type === 'replay') return replayed(decision.entry) as T;
    if (decision.type === 'suspend') {
      this.finish({ type: 'suspended', status: decision.status, wakeAt: decision.until });
      return never();
    }
    if (decision.type !== 'execute') throw new Error(`unexpected decision ${decision.type} for step.do`);
    const opts = resolveStepOptions(call.name, this.stepDefaults, options);
    await this.flushPending();
    // A cancel (or the engine stopping) that landed while pending writes flushed: no new attempt.
    if (this.outcome || this.journal.cancelRequested()) return this.finish({ type: 'cancelled' }), never();
    const attempt = decision.attempt;
    const key = idempotencyKey(this.journal.runId, call.name);
    const startedAt = this.journal.now();
    let value: unknown;
    let failure: unknown;
    let failed = false;
    this.bodyRunning = true;
    try {
      value = await withTimeout(() => body({ attempt, idempotencyKey: key }), opts.timeoutMs, call.name, attempt);
    } catch (err) {
      failed = true;
      failure = err;
    } finally {
      this.bodyRunning = false;
    }
    if (this.outcome) return never();
    const base = { seq: call.seq, name: call.name, kind: 'do' as const, attempts: attempt, startedAt: decision.entry?.startedAt ?? startedAt };
    if (!failed) {
      let result: Json;
      let text: string;
      try {
        text = toJsonText(value, `result of step '${call.name}'`);
        result = JSON.parse(text) as Json;
      } catch (err) {
        // Not storable: retrying the same code cannot help, so the run fails at once.
        const error = toErrorInfo(err);
        await this.journal.record({ ...base, status: 'failed', error, endedAt: this.journal.now() });
        this.finish({ type: 'failed', error });
        return never();
      }
      const entry: JournalEntry = { ...base, status: 'succeeded', result, endedAt: this.journal.now() };
      resultTextOf.set(entry, text);
      await this.journal.record(entry);
      return result as T;
    }
    const error = toErrorInfo(failure);
    const retry = decideRetry(opts.retry, attempt, failure, () => this.journal.random());
    if (retry.retry) {
      const nextRetryAt = this.journal.now() + retry.delayMs;
      this.finish({ type: 'suspended', status: 'retrying', wakeAt: nextRetryAt, entry: { ...base, status: 'retrying', error, nextRetryAt } });
      return never();
    }
    await this.journal.record({ ...base, status: 'failed', error, endedAt: this.journal.now() });
    throw fromErrorInfo(error);
  }

  private async sleepStep(rawName: string, wakeAtFrom: (now: number) => number): Promise<void> {
    const started = this.begin('sleep', rawName);
    if (!started) return never();
    const { call, decision } = started;
    if (decision.type === 'replay') return;
    if (decision.type === 'suspend') {
      this.finish({ type: 'suspended', status: 'sleeping', wakeAt: decision.until });
      return never();
    }
    const now = this.journal.now();
    if (decision.type === 'wake') {
      await this.journal.record({ ...decision.entry, status: 'succeeded', endedAt: now });
      return;
    }
    const wakeAt = wakeAtFrom(now);
    const entry: JournalEntry = { seq: call.seq, name: call.name, kind: 'sleep', status: 'sleeping', attempts: 1, startedAt: now, wakeAt };
    if (wakeAt <= now) {
      // Due at once (sleep(0), negative, or a past sleepUntil): no suspension needed.
      await this.journal.record({ ...entry, status: 'succeeded', endedAt: now });
      return;
    }
    this.finish({ type: 'suspended', status: 'sleeping', wakeAt, entry });
    return never();
  }

  private async waitStep(rawName: string, timeoutMs: number | undefined): Promise<Json> {
    const started = this.begin('wait', rawName);
    if (!started) return never();
    const { call, decision } = started;
    if (decision.type === 'replay') return replayed(decision.entry) as Json;
    const now = this.journal.now();
    const entry: JournalEntry =
      decision.type === 'await'
        ? decision.entry
        : { seq: call.seq, name: call.name, kind: 'wait', status: 'waiting', attempts: 1, startedAt: now, wakeAt: timeoutMs === undefined ? undefined : now + timeoutMs };
    await this.flushPending();
    const got = await this.journal.takeSignal(String(rawName), { ...entry, status: 'succeeded', endedAt: now });
    if (got) return got.payload;
    if (entry.wakeAt !== undefined && entry.wakeAt <= now) {
      const error = toErrorInfo(new TimeoutError(`waitForEvent '${call.name}' timed out after ${timeoutMsOf(entry)}ms`));
      await this.journal.record({ ...entry, status: 'timedout', error, endedAt: now });
      throw fromErrorInfo(error);
    }
    this.finish({ type: 'suspended', status: 'waiting', wakeAt: entry.wakeAt, entry: decision.type === 'await' ? undefined : entry });
    return never();
  }

  private async emitStep(eventName: string, payload: Json, options: EmitOptions | undefined): Promise<void> {
    if (typeof eventName !== 'string' || eventName.length === 0) throw new ValidationError('ctx.emit: event name must be a non-empty string');
    const started = this.begin('emit', `emit:${eventName}`);
    if (!started) return never();
    const { call, decision } = started;
    if (decision.type === 'replay') return;
    const data = roundTrip(payload, `ctx.emit('${eventName}') payload`) as Json;
    const id = options?.id ?? idempotencyKey(this.journal.runId, call.name);
    const now = this.journal.now();
    await this.flushPending();
    await this.journal.emit(
      { seq: call.seq, name: call.name, kind: 'emit', status: 'succeeded', attempts: 1, result: { event: eventName, id }, startedAt: now, endedAt: now },
      { name: eventName, payload: data, id },
    );
  }
}

function timeoutMsOf(e: JournalEntry): number {
  return e.wakeAt !== undefined && e.startedAt !== undefined ? e.wakeAt - e.startedAt : 0;
}

function replayed(entry: JournalEntry): Json {
  if (entry.status === 'succeeded') return entry.result ?? null;
  throw fromErrorInfo(entry.error ?? { name: 'Error', message: `step '${entry.name}' failed` });
}
