// The step protocol between the engine and a Deno run child (issue 11), shared by both ends:
// the frame schemas (zod, checked on receipt on both sides), the byte-bounded line splitter
// and the framing. Pure: the engine (Node) and the child (Deno) import this same file.
//
// Wire: the child connects to 127.0.0.1:<port> and first writes its token as exactly
// TOKEN_LINE_BYTES raw bytes (64 hex digits + '\n'); the engine reads those bytes and nothing
// more before deciding, and closes the connection on any mismatch. Only then do frames flow:
// one JSON object per line, UTF-8, each at most the agreed frame size.
//
//   engine -> child: hello, entry x hello.entries, then reply (one per request), run (start
//                    an attempt's body) and cancel
//   child -> engine: requests (attempt, attemptResult, record, takeSignal, emit, open,
//                    close, capability), heartbeat, log, and one final outcome
import * as z from 'zod';
import { TranquilError } from './errors.ts';
import { RUN_LOG_LEVELS, type RunLogFrame } from './run-log-line.ts';

export { RUNNER_TOKEN_ENV, TOKEN_BYTES, TOKEN_LINE_BYTES } from './runner-token.ts';

/** A frame that could not be read (malformed, oversized, out of place): ends the attempt. */
export class ProtocolError extends TranquilError {
  static override readonly errorName: string = 'ProtocolError';
}

/** A frame carries one payload (bounded by maxPayloadBytes) plus its envelope. */
export const FRAME_ENVELOPE_BYTES = 1024 * 1024;

const json = z.unknown();
const num = z.number().finite();

export const errorInfoSchema: z.ZodType<{ name: string; message: string; fields?: Record<string, unknown>; cause?: unknown }> = z.object({
  name: z.string(),
  message: z.string(),
  fields: z.record(z.string(), json).optional(),
  cause: z.lazy(() => errorInfoSchema).optional(),
});

const stepKind = z.enum(['do', 'sleep', 'wait', 'now', 'random', 'emit', 'use', 'publish', 'stream']);
export const journalEntrySchema = z.object({
  seq: z.number().int().min(0),
  name: z.string(),
  kind: stepKind,
  status: z.enum(['running', 'retrying', 'sleeping', 'waiting', 'parked', 'succeeded', 'failed', 'timedout']),
  attempts: z.number().int().min(0),
  result: json.optional(),
  error: errorInfoSchema.optional(),
  startedAt: num.optional(),
  endedAt: num.optional(),
  wakeAt: num.optional(),
  nextRetryAt: num.optional(),
  retryLimit: z.number().int().min(1).optional(),
  order: num.optional(),
});
const stepCall = z.object({ seq: z.number().int().min(0), kind: stepKind, name: z.string() });
const recorded = z.object({ kind: z.union([stepKind, z.literal('end')]), name: z.string() });
const attemptResult = z.union([
  z.object({ ok: z.literal(true), value: json.optional(), text: z.string().optional() }),
  z.object({ ok: z.literal(false), error: errorInfoSchema, terminal: z.boolean(), fatal: z.boolean().optional() }),
]);
const cancelView = z.object({ requested: z.boolean(), state: z.enum(['none', 'requested', 'forced']) });

const id = z.number().int().min(0);

export const engineFrameSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('hello'),
    runId: z.string(),
    workflow: z.string(),
    input: json,
    /** How many `entry` frames follow (one per recorded position; holes are left out). */
    entries: z.number().int().min(0),
    /** journalClock: the log's now() moves only with journaled events (Restate): the child
     *  must use the engine's `now` as is, or its entries differ on replay. settle: the child
     *  sends `idle` once it reacted to what it received (the engine's journal order then
     *  does not depend on how fast frames travel: Restate). */
    caps: z.object({ open: z.boolean(), close: z.boolean(), journalClock: z.boolean().optional(), settle: z.boolean().optional(), queues: z.boolean().optional() }),
    cancel: cancelView,
    now: num,
    maxPayloadBytes: z.number().int().min(1),
    cancelGraceMs: z.number().int().min(0).optional(),
    /** How often the child sends a `heartbeat` frame; the engine kills a child silent for
     *  its heartbeat timeout. */
    heartbeatMs: z.number().int().min(1).optional(),
    /** When the run must end (its timeout, docs/control.md): the child's session stops the
     *  code with a TimeoutError then, as in-process. Absent: no deadline. */
    deadline: num.optional(),
    /** The lowest level at which the engine writes run log lines (config `log.runs.level`):
     *  the child sends `runLog` frames at it and above. Absent: none are written (send none). */
    runLog: z.enum(RUN_LOG_LEVELS).optional(),
    /** runs.pause was asked (docs/control.md): the child's session starts no further step. */
    pause: z.boolean().optional(),
  }),
  /** `outside`: the backend finished this entry between sessions (a due sleep SQLite's wake
   *  recorded): what the code does after it, it does for the first time (StepLog.completedOutside). */
  z.object({ t: z.literal('entry'), entry: journalEntrySchema, outside: z.boolean().optional() }),
  /** ok: `value` (absent = undefined); not ok: `error`, rejected into the child's request.
   *  `pause`: whether runs.pause is asked as of this reply (every step ends with a reply, so
   *  the child's session sees a pause at its next step boundary, as in-process). */
  z.object({ t: z.literal('reply'), id, now: num, ok: z.boolean(), value: json.optional(), error: errorInfoSchema.optional(), pause: z.boolean().optional() }),
  /** The engine's log runs the body of attempt `id` now (it may instead reply with an
   *  outcome recorded earlier, and then never sends this). */
  z.object({ t: z.literal('run'), id }),
  z.object({ t: z.literal('cancel'), cancel: cancelView }),
  /** runs.pause asked (true) or withdrawn by a resume (false) while the child runs, pushed at
   *  once (StepLog.onPause): a child with no request in flight (code awaiting a timer between
   *  steps) stops before its next step, not after it. It only ever stops the child: one that
   *  ignores it runs on to its next suspension, where the engine's log pauses the run. */
  z.object({ t: z.literal('pause'), pause: z.boolean() }),
]);

export const outcomeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('succeeded'), output: json }),
  z.object({ type: z.literal('failed'), error: errorInfoSchema }),
  z.object({ type: z.literal('cancelled') }),
  z.object({
    type: z.literal('suspended'),
    status: z.enum(['sleeping', 'waiting', 'retrying', 'parked']),
    wakeAt: num.optional(),
    entries: z.array(journalEntrySchema),
    signals: z.array(z.string()),
  }),
  /** The step log failed under the session (cause as error info: it crossed a process). */
  z.object({ type: z.literal('interrupted'), cause: errorInfoSchema }),
]);

export const childFrameSchema = z.discriminatedUnion('t', [
  /** A step body attempt begins; the reply (the outcome as the log counted it) comes once the
   *  child sent attemptResult for the same id. */
  z.object({ t: z.literal('attempt'), id, call: stepCall, attempt: z.number().int().min(1), timeoutMs: z.number().int().min(0).optional() }),
  z.object({ t: z.literal('attemptResult'), id, result: attemptResult }),
  /** Replied to only once the entry is durable. */
  z.object({ t: z.literal('record'), id, entry: journalEntrySchema }),
  z.object({ t: z.literal('takeSignal'), id, signalName: z.string(), entry: journalEntrySchema }),
  z.object({ t: z.literal('emit'), id, entry: journalEntrySchema, event: z.object({ name: z.string(), payload: json, id: z.string() }) }),
  z.object({ t: z.literal('open'), id, call: stepCall }),
  /** A capability call (step.use): served by a provider in the engine's process, never in
   *  the child; the reply is the provider's result, or its error (CapabilityUnavailableError:
   *  no eligible provider, the step parks). */
  z.object({
    t: z.literal('capability'), id,
    request: z.object({
      runId: z.string(), capability: z.string(), affinity: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
      input: json, idempotencyKey: z.string(), attempt: z.number().int().min(1),
    }),
  }),
  /** step.start / step.invoke (docs/children.md): the engine starts the child run (its id
   *  derived there when absent); the reply is { runId, created }, or the refusal. */
  z.object({
    t: z.literal('startChild'), id,
    request: z.object({
      workflow: z.string(), input: json, runId: z.string().optional(),
      parent: z.object({ runId: z.string(), step: z.string(), onParentCancel: z.enum(['cancel', 'abandon']) }),
    }),
  }),
  /** ctx.signal: the engine sends the signal to the other run. */
  z.object({ t: z.literal('sendSignal'), id, runId: z.string(), name: z.string(), payload: json }),
  z.object({ t: z.literal('close'), id, position: z.number().int().min(0) }),
  /** caps.queues: a slot of a queue the workflow declares, for the step's next attempt
   *  (docs/flow-control.md); the reply is { grantedAt } once granted. The engine holds the
   *  slot and releases it when that attempt ends (or the execution does). */
  z.object({ t: z.literal('slot'), id, step: z.string().min(1).max(1024), queue: z.string().min(1).max(120), key: z.string().max(1024) }),
  /** The child gives up a slot it asked for (`slot` is that request's id): it leaves the line
   *  if it waits; a granted slot is released. Idempotent; it names only this child's asks. */
  z.object({ t: z.literal('release'), slot: id }),
  z.object({ t: z.literal('heartbeat') }),
  /** caps.settle: the child reacted to the first `seen` engine frames (the frames they made
   *  it send are on the wire before this one) and has been quiet since. */
  z.object({ t: z.literal('idle'), seen: z.number().int().min(0) }),
  z.object({ t: z.literal('log'), level: z.enum(['debug', 'info', 'warn', 'error']), message: z.string().max(64 * 1024) }),
  /** A ctx.log / info.log line. Routed here by its `t` only: the engine checks it against
   *  runLogFrameSchema (strict, size-bounded) and refuses a bad one with a warning, without
   *  failing the run (domain/run-log-line.ts). */
  z.looseObject({ t: z.literal('runLog') }),
  z.object({ t: z.literal('outcome'), outcome: outcomeSchema, cancelDelivered: z.boolean() }),
]);

export type EngineFrame = z.infer<typeof engineFrameSchema>;
/** What a child sends; a `runLog` frame as the child builds it (the engine receives any
 *  object with that `t` and checks it itself). */
/** A child frame as the engine decodes it (a `runLog` frame not checked yet). */
export type ReceivedChildFrame = z.infer<typeof childFrameSchema>;
export type ChildFrame = Exclude<z.infer<typeof childFrameSchema>, { t: 'runLog' }> | RunLogFrame;
export type WireOutcome = z.infer<typeof outcomeSchema>;

/** One frame as a line of JSON. */
export function encodeFrame(frame: EngineFrame | ChildFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/** Parses and validates one line from the other side, or throws a ProtocolError saying what
 *  was wrong (never echoing the whole frame). */
export function decodeFrame<T>(schema: z.ZodType<T>, line: string, from: 'engine' | 'child'): T {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new ProtocolError(`malformed frame from the ${from}: not JSON (${line.length} chars, starting ${JSON.stringify(line.slice(0, 40))})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const t = typeof raw === 'object' && raw !== null && 't' in raw ? ` '${String((raw as { t: unknown }).t)}'` : '';
    throw new ProtocolError(`malformed frame${t} from the ${from}: ${issue?.path.map(String).join('.') || '(frame)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Splits a byte stream into lines of at most `maxBytes` (without the newline). A longer
 *  line throws at once, before it is buffered further. */
export class LineSplitter {
  private parts: Uint8Array[] = [];
  private size = 0;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(private readonly maxBytes: number, private readonly from: 'engine' | 'child') {}

  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.size += end - start;
      if (this.size > this.maxBytes) throw new ProtocolError(`oversized frame from the ${this.from}: over ${this.maxBytes} bytes`);
      if (end > start) this.parts.push(chunk.subarray(start, end));
      if (nl === -1) return lines;
      lines.push(this.take());
      start = nl + 1;
    }
  }

  private take(): string {
    const buf = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) buf.set(p, at), (at += p.length);
    this.parts = [];
    this.size = 0;
    try {
      return this.decoder.decode(buf);
    } catch {
      throw new ProtocolError(`malformed frame from the ${this.from}: not UTF-8`);
    }
  }
}
