// What the engine reports of one execution of a workflow file's run, made on the engine's
// side of the step protocol (the child has no OpenTelemetry SDK and no sink of the host's):
// the execution's `run` span and one `step` span per body attempt the engine's log ran
// (with their metrics, as in-process), and the run's log lines (`runLog` frames), which it
// checks, bounds and tags itself: run id, workflow, step, attempt and trace ids come from
// here, never from the child (docs/observability.md, docs/runner.md). Its step events
// (docs/live-output.md) too: made from what the engine's log ran and recorded for the child
// (an attempt it began, a record or a signal it committed, the suspension it was handed),
// so they are the in-process session's, once per real attempt, none for a replayed step.
import type { ErrorInfo } from '../../domain/errors.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import { MAX_RUN_LOG_LINE_BYTES, RUN_LOG_BUDGET, reservedKeyIn, runLogFrameSchema } from '../../domain/run-log-line.ts';
import { idempotencyKey } from '../../domain/step-names.ts';
import type { StepKind } from '../../domain/run-view.ts';
import type { Logger } from '../../ports/logger.ts';
import type { RunLogOutput } from '../../ports/run-log.ts';
import type { StepLog } from '../../ports/step-log.ts';
import type { AttemptTrace, ExecutionTrace, RunEventName, RunTelemetry } from '../../ports/telemetry.ts';
import type { RunOutcome } from '../../runtime/run-outcome.ts';
import { emitStepEvent, type StepEvent, type StepEventSink, type StepEventType } from '../../runtime/step-events.ts';
import { streamOffset } from '../../domain/published-state.ts';
import type { Json } from '../../domain/json.ts';

export interface ObserveOptions {
  telemetry?: RunTelemetry;
  /** The run's stored trace context (its executions' parent). */
  traceparent?: string;
  /** Where run log lines go (config `log.runs`); absent: the child is told to send none. */
  runLog?: RunLogOutput;
  /** The engine's own logger: a refused or dropped line is said here (bounded). */
  logger?: Logger;
  /** How the child is named in the engine's own messages. */
  who: string;
  /** Where the run's step events go (engine.runs.subscribe); absent: none are made. */
  events?: StepEventSink;
}

/** A token bucket: `take(n)` is false once the burst is spent faster than the rate refills. */
class Bucket {
  private left: number;
  private at = performance.now();
  constructor(private readonly burst: number, private readonly perSecond: number) {
    this.left = burst;
  }
  take(n: number): boolean {
    const now = performance.now();
    this.left = Math.min(this.burst, this.left + ((now - this.at) / 1000) * this.perSecond);
    this.at = now;
    if (this.left < n) return false;
    this.left -= n;
    return true;
  }
}

const SUSPEND_EVENT: Record<string, RunEventName | undefined> = { sleeping: 'sleep', waiting: 'wait', retrying: 'retry', parked: 'park' };

export class ChildObserver {
  private trace: ExecutionTrace | undefined;
  private readonly firstExecution: boolean;
  /** This execution did something new (an attempt ran): reported even while Restate replays. */
  private traced = false;
  /** Attempts the engine's log ran in this execution, by `<step>/<attempt>`. */
  private readonly attempts = new Map<string, { at: AttemptTrace | undefined; open: boolean }>();
  private readonly lines = new Bucket(RUN_LOG_BUDGET.burstLines, RUN_LOG_BUDGET.linesPerSecond);
  private readonly bytes = new Bucket(RUN_LOG_BUDGET.burstBytes, RUN_LOG_BUDGET.bytesPerSecond);
  private refused = 0;
  private dropped = 0;
  /** The journal's statuses as the execution began: a suspension found there is not new. */
  private readonly before: Map<number, string>;
  /** Body attempts (`<step>/<attempt>`) begun for real whose outcome event is still due:
   *  begun in this execution, or in a killed child whose verdict this one served. */
  private readonly owed = new Set<string>();

  constructor(private readonly log: StepLog, private readonly o: ObserveOptions) {
    this.firstExecution = log.entries.length === 0;
    this.before = new Map(log.entries.flatMap((e) => (e ? [[e.seq, e.status] as [number, string]] : [])));
    this.trace = o.telemetry?.execution(log.runId, log.workflow, o.traceparent);
  }

  /** The level the child is told to send lines at (hello.runLog). */
  get lowestLevel(): 'debug' | 'info' | 'warn' | 'error' | undefined {
    const out = this.o.runLog;
    if (!out) return undefined;
    return (['debug', 'info', 'warn', 'error'] as const).find((l) => out.enabled(l));
  }

  /** The engine's log runs this attempt's body now (never for a replayed step). */
  attemptBegan(name: string, kind: string, attempt: number): void {
    this.traced = true;
    this.attempts.set(`${name}/${attempt}`, { at: this.trace?.attempt(name, kind as StepKind, attempt, idempotencyKey(this.log.runId, name)), open: true });
    // A publish or a stream's write is an attempt of the log's too, but no body of the code's.
    if (kind !== 'do' && kind !== 'use') return;
    this.owed.add(`${name}/${attempt}`);
    this.event('step.started', { name, kind }, { attempt });
  }

  /** An attempt that hung or crashed a killed child: its failure is handed to this one's
   *  session, whose verdict (retrying, failed) is that attempt's outcome event. */
  verdictServed(name: string, attempt: number): void {
    this.owed.add(`${name}/${attempt}`);
  }

  /** The engine's log recorded (durably) this entry for the child. */
  recorded(e: JournalEntry): void {
    if (e.kind === 'do' || e.kind === 'use') {
      if (e.status === 'succeeded') this.outcomeEvent('step.succeeded', e, e.attempts);
      else if (e.status === 'failed') this.outcomeEvent('step.failed', e, e.attempts, { error: e.error });
      return;
    }
    if (e.status !== 'succeeded') return;
    // Read as the journal's readers read it (published-state.ts): a result of another shape,
    // which a broken child could record, gives no event, and never a throw (the reply is due).
    const r = (typeof e.result === 'object' && e.result !== null ? e.result : {}) as { key?: unknown; stream?: unknown; chunk?: Json; closed?: unknown };
    if (e.kind === 'publish' && typeof r.key === 'string') {
      this.event('state.published', e, { key: r.key });
    } else if (e.kind === 'stream' && typeof r.stream === 'string') {
      if (r.closed === true) this.event('stream.closed', e, { key: r.stream, offset: streamOffset(e.name) });
      else this.event('stream.chunk', e, { key: r.stream, offset: streamOffset(e.name), ...(r.chunk !== undefined ? { chunk: r.chunk } : {}) });
    }
  }

  /** A wait took its signal (the log committed the take). */
  signaled(e: JournalEntry): void {
    this.event('step.signaled', e);
  }

  private event(type: StepEventType, step: { name: string; kind: StepKind }, extra?: Partial<StepEvent>): void {
    emitStepEvent(this.o.events, this.log, type, step, extra);
  }

  /** The outcome of an attempt begun for real, once (none for one the child replays). */
  private outcomeEvent(type: StepEventType, e: JournalEntry, attempt: number, extra?: Partial<StepEvent>): void {
    if (this.owed.delete(`${e.name}/${attempt}`)) this.event(type, e, Object.assign({ attempt }, extra));
  }

  /** The suspension's step events, as the in-process session emits them when it blocks: an
   *  attempt's retry or park, a sleep or a wait begun anew (one recorded before is not new). */
  private suspensionEvents(entries: JournalEntry[]): void {
    for (const e of entries) {
      if (e.status === 'retrying') this.outcomeEvent('step.retrying', e, e.attempts, { error: e.error, until: e.nextRetryAt });
      else if (e.status === 'parked') this.outcomeEvent('step.parked', e, e.attempts + 1, { error: e.error });
      else if (this.before.get(e.seq) === e.status) continue;
      else if (e.status === 'sleeping') this.event('step.sleeping', e, { until: e.wakeAt });
      else if (e.status === 'waiting') this.event('step.waiting', e, e.wakeAt === undefined ? undefined : { until: e.wakeAt });
    }
  }

  attemptEnded(name: string, attempt: number, ok: boolean, error?: ErrorInfo): void {
    // Kept (a late line of its body is still tagged with it), its span ended once.
    const a = this.attempts.get(`${name}/${attempt}`);
    if (!a?.open) return;
    a.open = false;
    a.at?.end(ok, error);
  }

  /** A `runLog` frame (`bytes`: its JSON text's length). A bad or excess line is dropped and
   *  said once per execution on the engine's logger; the run goes on. */
  line(frame: unknown, bytes: number): void {
    const out = this.o.runLog;
    if (bytes > MAX_RUN_LOG_LINE_BYTES) return this.refuse(`it is ${bytes} bytes, over the ${MAX_RUN_LOG_LINE_BYTES} a line may have`);
    const parsed = runLogFrameSchema.safeParse(frame);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return this.refuse(`${issue?.path.map(String).join('.') || '(frame)'}: ${issue?.message ?? 'invalid'}`);
    }
    const f = parsed.data;
    const reserved = reservedKeyIn(f.fields);
    if (reserved) return this.refuse(`its field '${reserved}' is one the engine sets`);
    const step = f.step;
    if (step && !this.attempts.has(`${step.name}/${step.attempt}`)) return this.refuse(`it names step '${step.name}' attempt ${step.attempt}, not an attempt of run ${this.log.runId} in this execution`);
    if (!this.lines.take(1) || !this.bytes.take(bytes)) return void this.drop();
    if (!out?.enabled(f.level)) return;
    // Restate replaying the invocation: the code that wrote this ran (and wrote it) before.
    if (!step && this.log.replaying?.()) return;
    const ids = step ? this.attempts.get(`${step.name}/${step.attempt}`)?.at?.ids?.() : this.trace?.ids?.();
    out.write({
      time: Date.now(), level: f.level, message: f.message, runId: this.log.runId, workflow: this.log.workflow,
      ...(step ? { step: step.name, attempt: step.attempt } : {}),
      ...(ids ? { traceId: ids.traceId, spanId: ids.spanId } : {}),
      ...(f.fields !== undefined ? { fields: f.fields } : {}),
    });
  }

  /** The execution ended (undefined: it failed before an outcome). */
  ended(outcome: RunOutcome | undefined): void {
    for (const a of this.attempts.values()) if (a.open) a.at?.end(false, { name: 'ProtocolError', message: 'the execution ended before the attempt reported' });
    this.attempts.clear();
    if (outcome?.type === 'suspended') this.suspensionEvents(outcome.entries as JournalEntry[]);
    this.owed.clear();
    if (this.dropped > 0 || this.refused > 1) {
      this.say(`${this.dropped} run log line(s) dropped over the rate limit (${RUN_LOG_BUDGET.linesPerSecond} lines/s, burst ${RUN_LOG_BUDGET.burstLines}; ${RUN_LOG_BUDGET.bytesPerSecond} bytes/s, burst ${RUN_LOG_BUDGET.burstBytes}) and ${this.refused} refused in this execution`);
    }
    const t = this.trace;
    this.trace = undefined;
    if (!t) return;
    if (!this.traced && this.log.replaying?.()) return t.drop();
    if (!outcome) return t.end({ type: 'interrupted' }, this.firstExecution);
    if (outcome.type === 'suspended') {
      // The events of what this execution began waiting on (one recorded before is not new).
      for (const e of outcome.entries as JournalEntry[]) {
        const ev = SUSPEND_EVENT[e.status];
        if (ev && this.before.get(e.seq) !== e.status) t.event(ev, e.name, e.wakeAt ?? e.nextRetryAt);
      }
      return t.end({ type: 'suspended', status: outcome.status, wakeAt: outcome.wakeAt }, this.firstExecution);
    }
    t.end({ type: outcome.type, error: outcome.type === 'failed' ? outcome.error : undefined }, this.firstExecution);
  }

  private refuse(why: string): void {
    // Counted against the budget too: a flood of bad frames is a flood.
    this.lines.take(1);
    if (this.refused++ === 0) this.say(`a run log line was refused: ${why} (further refusals in this execution are counted, not written)`);
  }

  private drop(): void {
    if (this.dropped++ === 0) this.say('its run log lines are over the rate limit: dropped from now on in this execution (counted)');
  }

  private say(message: string): void {
    const l = this.o.logger;
    if (l?.enabled('warn')) l.log('warn', `workflow '${this.log.workflow}' run ${this.log.runId} (${this.o.who}): ${message}`);
  }
}
