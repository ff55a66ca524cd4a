// The `run` handler of a Tranquil workflow on Restate: one invocation per run. It holds no
// replay decisions: it drives the shared RunSession over a RestateStepLog and turns each
// outcome into Restate terms (docs/restate.md has the mapping):
// - suspended: wait durably (ctx.sleep, the next signal's durable promise), then run the
//   session again from the top, as the SQLite executor does after a wake;
// - failed: park (the run shows `failed`); runs.retry resolves `~retry#<cycle>` and the run
//   resumes with the journal truncated at the retry point (domain retryPlan);
// - cancelled: Restate's CancelledError; diverged: recorded outside Restate, then ended.
// Views are kept in workflow state (`~run`, `~meta`, `~s<p>`), read by the engine over SQL.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import { CancelledError, type ErrorInfo } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import { retryPlan } from '../../domain/retry-point.ts';
import type { RunView, StepView } from '../../domain/run-view.ts';
import { RunSession, type SessionLimits } from '../../runtime/run-session.ts';
import type { WorkflowDefinition } from '../../../sdk/workflow.ts';
import { RestateStepLog } from './step-log.ts';
import { identityCodec, type PayloadCodec } from '../../domain/payload-codec.ts';
import { sealJson } from '../../domain/payload-codec.ts';
import { sealPayloads } from './run-views.ts';

export interface RunHooks {
  /** Publishes an event (dedup by id) from inside a journaled ctx.run. */
  emit(req: { name: string; payload: Json; id: string }): Promise<unknown>;
  /** The code no longer matches the journal: record it outside Restate and end the invocation. */
  diverged(runId: string, workflow: string, error: ErrorInfo): Promise<void>;
  /** A run reached succeeded / failed (parked) / cancelled in this process; `view` is its
   *  state as this handler wrote it (durable once Restate completes the invocation). */
  settled(runId: string, view: RunView): void;
  /** Aborted when the engine stops: step bodies in flight are told to stop. */
  stopSignal?: AbortSignal;
  /** Payloads are sealed through it before they reach Restate's journal or state. */
  codec?: PayloadCodec;
}

/** The value runs.retry resolves `~retry#<cycle>` with (`true` from engines before `from`). */
export interface RetryRequest {
  /** The step to resume at, as the engine reported it to the caller; absent: the default. */
  from?: string;
  /** When the retry was asked (the retry handler's journaled time): the run's clock moves on. */
  t?: number;
}


export interface RunState {
  status: 'running' | 'sleeping' | 'waiting' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';
  wakeAt?: string;
  output?: Json;
  error?: ErrorInfo;
}

/** Fresh per call: a shared never-settling promise would pin every awaiting continuation. */
const never = <T = never>(): Promise<T> => new Promise<T>(() => {});
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const PARK_TTL_MS = 7 * 86_400_000;

/** One invocation of a workflow's `run` handler. Lives as long as the invocation. */
export class RestateRun {
  /** What the state writes said, kept to hand engine.result() a view without a query. */
  private readonly written: { meta?: { version: string; input: Json; startedAt?: string }; run?: RunState; steps: Map<number, StepView> } = { steps: new Map() };
  private log!: RestateStepLog;

  constructor(
    private readonly rctx: restate.WorkflowContext,
    private readonly def: WorkflowDefinition,
    private readonly version: string,
    private readonly hooks: RunHooks,
    private readonly limits: SessionLimits = {},
  ) {}

  private get runId(): string {
    return this.rctx.key;
  }

  private get codec(): PayloadCodec {
    return this.hooks.codec ?? identityCodec;
  }

  async execute(input: Json): Promise<Json> {
    try {
      return await this.invoke(input);
    } finally {
      this.log?.dispose();
    }
  }

  private async invoke(input: Json): Promise<Json> {
    // The version is journaled with the start: state writes are compared on replay, so
    // everything written must come from the journal, not from the code now running.
    const start = await this.rctx.run('~start', () => ({ t: Date.now(), version: this.version }));
    this.written.meta = { version: start.version, input, startedAt: iso(start.t) };
    this.rctx.set('~meta', sealPayloads(this.codec, this.written.meta, ['input']));
    this.log = new RestateStepLog(this.rctx, this.def.name, JSON.stringify(input), start.t, {
      emit: (req) => this.hooks.emit(req),
      stepChanged: (step) => this.setStep(step),
    }, this.hooks.stopSignal, this.codec);
    this.setRun({ status: 'running' });
    for (let cycle = 0; ; ) {
      this.log.beginSession();
      const outcome = this.log.cancelRequested() ? ({ type: 'cancelled' } as const) : await new RunSession(this.log, this.def.fn, this.def.stepDefaults, this.limits).run();
      switch (outcome.type) {
        case 'succeeded':
          this.setRun({ status: 'succeeded', output: outcome.output });
          this.hooks.settled(this.runId, this.view());
          // The invocation's output is journaled by Restate too: sealed.
          return sealJson(this.codec, outcome.output);
        case 'cancelled':
          this.setRun({ status: 'cancelled' });
          this.hooks.settled(this.runId, this.view());
          throw new restate.CancelledError();
        case 'interrupted':
          // Not the workflow's failure (a transport or SDK error): Restate retries the invocation.
          throw outcome.cause;
        case 'suspended':
          for (const entry of outcome.entries) await this.log.record(entry);
          this.setRun({ status: outcome.status, wakeAt: iso(outcome.wakeAt) });
          await this.log.suspend(outcome.wakeAt, outcome.signals).catch((err) => {
            // Cancelled while suspended: the next session throws it into the code (cleanup).
            if (!this.log.cancelled) throw err;
          });
          this.setRun({ status: 'running' });
          continue;
        case 'failed':
          if (outcome.error.name === 'NonDeterminismError') {
            // Further commands would not match the recorded journal: end it from outside.
            await this.hooks.diverged(this.runId, this.def.name, outcome.error);
            return never();
          }
          await this.park(outcome.error, cycle++);
          continue;
      }
    }
  }

  /** Parked failed: the run shows `failed` until runs.retry resolves `~retry#<cycle>` (then
   *  the failed step is reset and the run goes on) or the park outlives its TTL. */
  private async park(error: ErrorInfo, cycle: number): Promise<void> {
    this.setRun({ status: 'failed', error });
    this.rctx.set('~cycle', cycle);
    this.hooks.settled(this.runId, this.view());
    let woke: 'retry' | 'ttl';
    try {
      woke = await this.log.driver.await(
        restate.RestatePromise.race([
          this.rctx.promise<boolean>(`~retry#${cycle}`).get().map(() => 'retry' as const),
          this.rctx.sleep(PARK_TTL_MS, '~park').map(() => 'ttl' as const),
        ]),
      );
    } catch (err) {
      // A failed run has nothing to clean up: a cancel while parked ends it.
      if (err instanceof CancelledError) {
        this.setRun({ status: 'cancelled' });
        this.hooks.settled(this.runId, this.view());
        throw new restate.CancelledError();
      }
      throw err;
    }
    if (woke === 'ttl') throw new restate.TerminalError(`${error.name}: ${this.codec.encode(error.message)}`);
    const asked = await this.log.driver.await(this.rctx.promise<RetryRequest | boolean>(`~retry#${cycle}`).get());
    const req: RetryRequest = typeof asked === 'object' && asked !== null ? asked : {};
    if (typeof req.t === 'number') this.log.advance(req.t);
    this.log.beginSession(); // entries as recorded, the failure included
    // The engine checked `from` against the same steps; a name gone missing since falls
    // back to the default point rather than failing a parked run.
    const plan = retryPlan(this.log.entries, req.from) ?? retryPlan(this.log.entries);
    if (plan?.from) {
      this.log.truncate(plan.from.seq);
      for (const d of plan.discarded) {
        this.written.steps.delete(d.seq);
        this.rctx.clear(`~s${d.seq}`);
      }
    }
    this.setRun({ status: 'running' });
  }

  private setRun(s: RunState): void {
    this.written.run = s;
    this.rctx.set('~run', sealPayloads(this.codec, s, ['output', 'error']));
  }

  private setStep(step: StepView): void {
    this.written.steps.set(step.seq, step);
    this.rctx.set(`~s${step.seq}`, sealPayloads(this.codec, step, ['result', 'error']));
  }

  private view(): RunView {
    const run = this.written.run;
    const v: RunView = {
      runId: this.runId,
      workflow: this.def.name,
      version: this.written.meta?.version ?? this.version,
      status: run?.status ?? 'running',
      input: this.written.meta?.input ?? null,
      createdAt: this.written.meta?.startedAt ?? new Date(this.log.now()).toISOString(),
      updatedAt: new Date(Math.max(this.log.now(), Date.now())).toISOString(),
      steps: [...this.written.steps.values()].sort((a, b) => a.seq - b.seq),
    };
    if (run?.output !== undefined) v.output = run.output;
    if (run?.error !== undefined) v.error = run.error;
    return v;
  }
}
