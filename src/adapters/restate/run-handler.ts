// The Tranquil step surface on a Restate workflow context (docs/restate.md has the mapping).
//
// Journal shape per step position p: one `ctx.run('s<p>')` marker/attempt first (its result
// says which step was recorded there, so a changed workflow is detected by US, with our
// position and names, before Restate's own journal check would pause the invocation),
// then the step's own commands (retry sleeps, sleeps, durable-promise waits). Step retries
// are our loop (exact attempt numbers, backoff, jitter from ctx.rand); every attempt's
// outcome is a journaled ctx.run result, never a thrown error Restate would retry.
// Views are kept in workflow state (`~run`, `~meta`, `~s<p>`), read by the engine over SQL.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import {
  NonDeterminismError, TerminalError, TimeoutError, ValidationError, fromErrorInfo, toErrorInfo, type ErrorInfo,
} from '../../domain/errors.ts';
import { roundTrip, type Json } from '../../domain/json.ts';
import { decideRetry } from '../../domain/retry-policy.ts';
import type { RunView, StepKind, StepView } from '../../domain/run-view.ts';
import { StepNamer, idempotencyKey } from '../../domain/step-names.ts';
import { stepApi } from '../../runtime/step-api.ts';
import { withTimeout } from '../../runtime/with-timeout.ts';
import { normalizeStepOptions } from '../../../sdk/step-options.ts';
import type { EmitOptions, StepApi, StepBody, StepOptions, WorkflowContext } from '../../../sdk/types.ts';
import type { WorkflowDefinition } from '../../../sdk/workflow.ts';

export interface RunHooks {
  /** Publishes an event (dedup by id) from inside a journaled ctx.run. */
  emit(req: { name: string; payload: Json; id: string }): Promise<unknown>;
  /** The code no longer matches the journal: record it outside Restate and end the invocation. */
  diverged(runId: string, workflow: string, error: ErrorInfo): Promise<void>;
  /** A run reached succeeded / failed (parked) / cancelled in this process; `view` is its
   *  state as this handler wrote it (durable once Restate completes the invocation). */
  settled(runId: string, view: RunView): void;
}

export interface RunState {
  status: 'running' | 'sleeping' | 'waiting' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';
  wakeAt?: string;
  output?: Json;
  error?: ErrorInfo;
}

/** A step's marker/attempt record as journaled in ctx.run results. */
interface Marker {
  k: StepKind | 'end';
  n: string;
  t: number;
  ok?: boolean;
  v?: Json;
  error?: ErrorInfo;
  terminal?: boolean;
  fatal?: boolean;
  wakeAt?: number;
  deadline?: number;
}

type Abort = { type: 'failed'; error: ErrorInfo } | { type: 'cancelled' } | { type: 'diverged'; error: ErrorInfo };

/** Fresh per call: a shared never-settling promise would pin every awaiting continuation. */
const never = <T = never>(): Promise<T> => new Promise<T>(() => {});
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const PARK_TTL_MS = 7 * 86_400_000;

class RunAborted extends Error {}

/** One invocation of a workflow's `run` handler. Lives as long as the invocation. */
export class RestateRun {
  private pos = 0;
  private namer = new StepNamer();
  private clock = 0;
  private startClock = 0;
  private bodyRunning = false;
  private abort: ((a: Abort) => void) | undefined;
  private aborted: Abort | undefined;
  /** Results of finished steps, kept across retry cycles of a parked-failed run. */
  private readonly memo = new Map<string, { ok: boolean; v?: Json; error?: ErrorInfo; t: number }>();
  private readonly cursors = new Map<string, number>();
  private readonly randoms: number[] = [];
  private randomIdx = 0;
  private lastFailed: { name: string; error: ErrorInfo } | undefined;
  /** What the state writes said, kept to hand engine.result() a view without a query. */
  private readonly written: { meta?: { version: string; input: Json; startedAt?: string }; run?: RunState; steps: Map<number, StepView> } = { steps: new Map() };

  constructor(
    private readonly rctx: restate.WorkflowContext,
    private readonly def: WorkflowDefinition,
    private readonly version: string,
    private readonly hooks: RunHooks,
  ) {}

  private get runId(): string {
    return this.rctx.key;
  }

  async execute(input: Json): Promise<Json> {
    // The version is journaled with the start: state writes are compared on replay, so
    // everything written must come from the journal, not from the code now running.
    const start = await this.rctx.run('~start', () => ({ t: Date.now(), version: this.version }));
    this.startClock = start.t;
    this.written.meta = { version: start.version, input, startedAt: iso(start.t) };
    this.rctx.set('~meta', this.written.meta);
    for (let cycle = 0; ; cycle++) {
      this.pos = 0;
      this.namer = new StepNamer();
      this.clock = this.startClock;
      this.randomIdx = 0;
      this.setRun({ status: 'running' });
      const outcome = await this.cycle(input);
      if (outcome.type === 'succeeded') {
        this.setRun({ status: 'succeeded', output: outcome.output });
        this.hooks.settled(this.runId, this.view());
        return outcome.output;
      }
      if (outcome.type === 'cancelled') {
        this.setRun({ status: 'cancelled' });
        this.hooks.settled(this.runId, this.view());
        throw new restate.CancelledError();
      }
      if (outcome.type === 'diverged') {
        // Further commands would not match the recorded journal: end it from outside.
        await this.hooks.diverged(this.runId, this.def.name, outcome.error);
        return never();
      }
      // Parked failed: the run shows `failed`; runs.retry resolves ~retry#<cycle> and the
      // workflow runs again from the top with recorded results kept.
      this.setRun({ status: 'failed', error: outcome.error });
      this.rctx.set('~cycle', cycle);
      this.hooks.settled(this.runId, this.view());
      let woke: 'retry' | 'ttl';
      try {
        woke = await restate.RestatePromise.race([
          this.rctx.promise<boolean>(`~retry#${cycle}`).get().map(() => 'retry' as const),
          this.rctx.sleep(PARK_TTL_MS, '~park').map(() => 'ttl' as const),
        ]);
      } catch (err) {
        if (err instanceof restate.CancelledError) {
          this.setRun({ status: 'cancelled' });
          this.hooks.settled(this.runId, this.view());
        }
        throw err;
      }
      if (woke === 'ttl') throw new restate.TerminalError(`${outcome.error.name}: ${outcome.error.message}`);
      // The step whose failure failed the run runs again, with the same idempotency key.
      if (this.lastFailed && this.lastFailed.error.message === outcome.error.message) this.memo.delete(this.lastFailed.name);
    }
  }

  private async cycle(input: Json): Promise<{ type: 'succeeded'; output: Json } | Abort> {
    this.aborted = undefined;
    const aborted = new Promise<Abort>((r) => (this.abort = r));
    const ran = (async () => {
      try {
        const output = await this.def.fn({ input, step: this.stepApi(), ctx: this.context() });
        const out = roundTrip(output, `workflow '${this.def.name}' output`) as Json;
        await this.marker({ k: 'end', n: '(end)' }, () => ({}), this.pos, `s${this.pos}`);
        return { type: 'succeeded' as const, output: out };
      } catch (err) {
        if (err instanceof RunAborted) return never();
        if (err instanceof restate.CancelledError) return { type: 'cancelled' as const };
        return { type: 'failed' as const, error: toErrorInfo(err) };
      }
    })();
    return Promise.race([ran, aborted]);
  }

  private stop(a: Abort): never {
    if (!this.aborted) {
      this.aborted = a;
      this.abort?.(a);
    }
    throw new RunAborted();
  }

  private setRun(s: RunState): void {
    this.written.run = s;
    this.rctx.set('~run', s);
  }

  private setStep(p: number, v: Omit<StepView, 'seq'>): void {
    const step = { seq: p, ...v };
    this.written.steps.set(p, step);
    this.rctx.set(`~s${p}`, step);
  }

  private view(): RunView {
    const run = this.written.run;
    const v: RunView = {
      runId: this.runId,
      workflow: this.def.name,
      version: this.written.meta?.version ?? this.version,
      status: run?.status ?? 'running',
      input: this.written.meta?.input ?? null,
      createdAt: this.written.meta?.startedAt ?? new Date(this.startClock).toISOString(),
      updatedAt: new Date(Math.max(this.clock, Date.now())).toISOString(),
      steps: [...this.written.steps.values()].sort((a, b) => a.seq - b.seq),
    };
    if (run?.output !== undefined) v.output = run.output;
    if (run?.error !== undefined) v.error = run.error;
    return v;
  }

  private begin(kind: StepKind, rawName: string): { p: number; name: string } {
    if (this.aborted) throw new RunAborted();
    if (this.bodyRunning) throw new ValidationError(`step.${kind}('${String(rawName)}') called inside a step.do body: steps cannot nest`);
    return { p: this.pos++, name: this.namer.next(rawName) };
  }

  /** The journaled marker at this position; on replay, checks it records the same step. */
  private async marker(expect: { k: Marker['k']; n: string }, produce: () => Promise<Partial<Marker>> | Partial<Marker>, p = this.pos - 1, entry = `s${p}`): Promise<Marker> {
    let fresh = false;
    let m: Marker;
    try {
      m = await this.rctx.run(entry, async () => {
        fresh = true;
        return { ...(await produce()), k: expect.k, n: expect.n, t: Date.now() } as Marker;
      });
    } catch (err) {
      if (err instanceof restate.CancelledError) this.stop({ type: 'cancelled' });
      throw err;
    }
    if (!fresh && (m.k !== expect.k || m.n !== expect.n)) {
      const expected = expect.k === 'end' ? 'the run to finish' : `${expect.k} '${expect.n}'`;
      const recorded = m.k === 'end' ? 'the run finishing' : `${m.k} '${m.n}'`;
      this.stop({ type: 'diverged', error: toErrorInfo(new NonDeterminismError(this.runId, p, expected, recorded)) });
    }
    this.clock = Math.max(this.clock, m.t);
    return m;
  }

  private async durable<T>(p: RestatePromise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof restate.CancelledError) this.stop({ type: 'cancelled' });
      throw err;
    }
  }

  private stepApi(): StepApi {
    return stepApi({
      do: (name, options, body) => this.doStep(name, options, body),
      sleep: (name, wakeAtFrom) => this.sleepStep(name, wakeAtFrom),
      wait: (name, timeoutMs) => this.waitStep(name, timeoutMs),
    });
  }

  private context(): WorkflowContext {
    return {
      runId: this.runId,
      workflow: this.def.name,
      // Restate cannot journal synchronously: now() is the time of the last durable event
      // (run start, a step's completion, a sleep's due time, a signal's arrival).
      now: () => this.clock,
      random: () => {
        if (this.randomIdx >= this.randoms.length) this.randoms.push(this.rctx.rand.random());
        return this.randoms[this.randomIdx++]!;
      },
      emit: (name: string, payload?: Json, options?: EmitOptions) => this.emitStep(name, payload ?? null, options),
    };
  }

  private async doStep(rawName: string, options: StepOptions | undefined, body: StepBody<unknown>): Promise<unknown> {
    const { p, name } = this.begin('do', rawName);
    const memo = this.memo.get(name);
    if (memo) {
      this.clock = Math.max(this.clock, memo.t);
      if (memo.ok) return memo.v;
      throw fromErrorInfo(memo.error!);
    }
    const defaults = this.def.stepDefaults;
    const opts = normalizeStepOptions(name, { ...defaults, ...options, retries: { ...defaults.retries, ...options?.retries } });
    const key = idempotencyKey(this.runId, name);
    const startedAt = iso(this.clock);
    for (let attempt = 1; ; attempt++) {
      const m = await this.marker({ k: 'do', n: name }, () => this.attempt(name, key, attempt, body, opts.timeoutMs), p, attempt === 1 ? `s${p}` : `s${p}.${attempt}`);
      if (m.ok) {
        this.memo.set(name, { ok: true, v: m.v ?? null, t: m.t });
        this.setStep(p, { name, kind: 'do', status: 'succeeded', attempts: attempt, result: m.v ?? null, startedAt, endedAt: iso(m.t) });
        return m.v ?? null;
      }
      const error = m.error!;
      if (m.fatal) {
        this.setStep(p, { name, kind: 'do', status: 'failed', attempts: attempt, error, startedAt, endedAt: iso(m.t) });
        this.stop({ type: 'failed', error });
      }
      const decision = decideRetry(opts.retry, attempt, m.terminal ? new TerminalError(error.message) : fromErrorInfo(error), () => this.rctx.rand.random());
      if (!decision.retry) {
        this.memo.set(name, { ok: false, error, t: m.t });
        this.lastFailed = { name, error };
        this.setStep(p, { name, kind: 'do', status: 'failed', attempts: attempt, error, startedAt, endedAt: iso(m.t) });
        throw fromErrorInfo(error);
      }
      const nextRetryAt = this.clock + decision.delayMs;
      this.setStep(p, { name, kind: 'do', status: 'retrying', attempts: attempt, error, startedAt, nextRetryAt: iso(nextRetryAt) });
      this.setRun({ status: 'retrying', wakeAt: iso(nextRetryAt) });
      await this.durable(this.rctx.sleep(decision.delayMs, `r${p}.${attempt}`));
      this.clock = Math.max(this.clock, nextRetryAt);
      this.setRun({ status: 'running' });
    }
  }

  /** One attempt inside ctx.run: every outcome is a result, so Restate never retries it. */
  private async attempt(name: string, key: string, attempt: number, body: StepBody<unknown>, timeoutMs: number | undefined): Promise<Partial<Marker>> {
    this.bodyRunning = true;
    let value: unknown;
    try {
      value = await withTimeout(() => body({ attempt, idempotencyKey: key }), timeoutMs, name, attempt);
    } catch (err) {
      return { ok: false, error: toErrorInfo(err), terminal: err instanceof TerminalError };
    } finally {
      this.bodyRunning = false;
    }
    try {
      return { ok: true, v: roundTrip(value, `result of step '${name}'`) as Json };
    } catch (err) {
      return { ok: false, fatal: true, error: toErrorInfo(err) };
    }
  }

  private async sleepStep(rawName: string, wakeAtFrom: (t: number) => number): Promise<void> {
    const { p, name } = this.begin('sleep', rawName);
    if (this.memo.has(name)) {
      this.clock = Math.max(this.clock, this.memo.get(name)!.t);
      return;
    }
    const m = await this.marker({ k: 'sleep', n: name }, () => ({ wakeAt: wakeAtFrom(Date.now()) }));
    const wakeAt = m.wakeAt!;
    // Decided from the journaled marker time, so a replay takes the same branch.
    if (wakeAt > m.t) {
      this.setStep(p, { name, kind: 'sleep', status: 'sleeping', attempts: 1, startedAt: iso(m.t), wakeAt: iso(wakeAt) });
      this.setRun({ status: 'sleeping', wakeAt: iso(wakeAt) });
      await this.durable(this.rctx.sleep(Math.max(0, wakeAt - Date.now()), `z${p}`));
      this.setRun({ status: 'running' });
    }
    this.clock = Math.max(this.clock, wakeAt);
    this.memo.set(name, { ok: true, t: this.clock });
    this.setStep(p, { name, kind: 'sleep', status: 'succeeded', attempts: 1, startedAt: iso(m.t), endedAt: iso(this.clock), wakeAt: iso(wakeAt) });
  }

  private async waitStep(rawName: string, timeoutMs: number | undefined): Promise<Json> {
    const { p, name } = this.begin('wait', rawName);
    const memo = this.memo.get(name);
    if (memo) {
      this.clock = Math.max(this.clock, memo.t);
      if (memo.ok) return memo.v ?? null;
      throw fromErrorInfo(memo.error!);
    }
    const signal = String(rawName);
    const m = await this.marker({ k: 'wait', n: name }, () => ({ deadline: timeoutMs === undefined ? undefined : Date.now() + Math.max(0, timeoutMs) }));
    const slot = this.cursors.get(signal) ?? 1;
    this.setStep(p, { name, kind: 'wait', status: 'waiting', attempts: 1, startedAt: iso(m.t), wakeAt: iso(m.deadline) });
    this.setRun({ status: 'waiting', wakeAt: iso(m.deadline) });
    let got = this.rctx.promise<{ v: Json; t: number }>(`evt:${signal}#${slot}`).get();
    if (m.deadline !== undefined) got = got.orTimeout(Math.max(0, m.deadline - Date.now()));
    try {
      const env = await this.durable(got);
      // The cursor moves only on receipt: after a timeout the next wait takes the same slot,
      // so a late signal goes to the next wait of that name.
      this.cursors.set(signal, slot + 1);
      this.clock = Math.max(this.clock, env.t);
      this.memo.set(name, { ok: true, v: env.v, t: this.clock });
      this.setStep(p, { name, kind: 'wait', status: 'succeeded', attempts: 1, result: env.v, startedAt: iso(m.t), endedAt: iso(this.clock) });
      this.setRun({ status: 'running' });
      return env.v;
    } catch (err) {
      if (!(err instanceof restate.TimeoutError)) throw err;
      this.clock = Math.max(this.clock, m.deadline ?? this.clock);
      const error = toErrorInfo(new TimeoutError(`waitForEvent '${name}' timed out after ${timeoutMs}ms`));
      this.memo.set(name, { ok: false, error, t: this.clock });
      this.setStep(p, { name, kind: 'wait', status: 'timedout', attempts: 1, error, startedAt: iso(m.t), endedAt: iso(this.clock) });
      this.setRun({ status: 'running' });
      throw fromErrorInfo(error);
    }
  }

  private async emitStep(eventName: string, payload: Json, options: EmitOptions | undefined): Promise<void> {
    if (typeof eventName !== 'string' || eventName.length === 0) throw new ValidationError('ctx.emit: event name must be a non-empty string');
    const { p, name } = this.begin('emit', `emit:${eventName}`);
    if (this.memo.has(name)) return;
    const data = roundTrip(payload, `ctx.emit('${eventName}') payload`) as Json;
    const id = options?.id ?? idempotencyKey(this.runId, name);
    const m = await this.marker({ k: 'emit', n: name }, async () => {
      await this.hooks.emit({ name: eventName, payload: data, id });
      return { v: { event: eventName, id } };
    });
    this.memo.set(name, { ok: true, t: m.t });
    this.setStep(p, { name, kind: 'emit', status: 'succeeded', attempts: 1, result: { event: eventName, id }, startedAt: iso(m.t), endedAt: iso(m.t) });
  }
}

type RestatePromise<T> = restate.RestatePromise<T>;
