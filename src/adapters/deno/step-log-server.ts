// Serves one run's StepLog to its Deno child over an authenticated connection: delivers the
// journal (hello + one entry frame per recorded position), answers each request by calling
// the engine's own step log (on SQLite: the executor's journal, whose promises resolve only
// once the write committed, so a `record` reply means durable), forwards cancels, and ends
// with the child's outcome. A malformed or oversized frame, or a connection that closes
// before the outcome, ends the attempt with a ProtocolError; nothing committed changes.
import type { Socket } from 'node:net';
import { fromErrorInfo, toErrorInfo, type ErrorInfo } from '../../domain/errors.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import {
  FRAME_ENVELOPE_BYTES, LineSplitter, ProtocolError, childFrameSchema, decodeFrame, encodeFrame, type ChildFrame, type EngineFrame, type WireOutcome,
} from '../../domain/runner-protocol.ts';
import type { AttemptResult, StepLog } from '../../ports/step-log.ts';
import type { RunOutcome } from '../../runtime/run-outcome.ts';

export interface ServedOutcome {
  outcome: RunOutcome;
  cancelDelivered: boolean;
}

export interface ServeOptions {
  maxPayloadBytes: number;
  cancelGraceMs?: number;
  /** `log` frames from the child. */
  onLog?: (level: string, message: string) => void;
}

export function serveStepLog(socket: Socket, log: StepLog, o: ServeOptions): Promise<ServedOutcome> {
  return new Promise<ServedOutcome>((resolve, reject) => {
    let over = false;
    const attempts = new Map<number, (r: AttemptResult) => void>();
    const splitter = new LineSplitter(o.maxPayloadBytes + FRAME_ENVELOPE_BYTES, 'child');
    const send = (f: EngineFrame) => {
      if (!over) socket.write(encodeFrame(f));
    };
    const fail = (err: Error) => {
      if (over) return;
      over = true;
      socket.destroy();
      reject(err);
    };
    const reply = (id: number, p: Promise<unknown> | unknown) =>
      Promise.resolve(p).then(
        (value) => send(value === undefined ? { t: 'reply', id, now: log.now(), ok: true } : { t: 'reply', id, now: log.now(), ok: true, value }),
        (err: unknown) => send({ t: 'reply', id, now: log.now(), ok: false, error: toErrorInfo(err) as ErrorInfo }),
      );
    const cancelView = () => ({ requested: log.cancelRequested(), state: log.cancelState?.() ?? 'none' });

    const handle = (f: ChildFrame): void => {
      switch (f.t) {
        case 'attempt':
          return void reply(
            f.id,
            log.attempt(f.call, f.attempt, () => new Promise<AttemptResult>((r) => (attempts.set(f.id, r), send({ t: 'run', id: f.id })))),
          );
        case 'attemptResult': {
          const done = attempts.get(f.id);
          if (!done) throw new ProtocolError(`attemptResult ${f.id} answers no attempt in flight`);
          attempts.delete(f.id);
          return done(f.result as AttemptResult);
        }
        case 'record':
          return void reply(f.id, log.record(f.entry as JournalEntry));
        case 'takeSignal':
          return void reply(f.id, log.takeSignal(f.signalName, f.entry as JournalEntry).then((got) => got ?? null));
        case 'emit':
          return void reply(f.id, log.emit(f.entry as JournalEntry, f.event as { name: string; payload: Json; id: string }).then((r) => r ?? null));
        case 'open':
          return void reply(f.id, Promise.resolve(log.open?.(f.call)).then((r) => r ?? null));
        case 'close':
          return void reply(f.id, Promise.resolve(log.close?.(f.position)).then((r) => r ?? null));
        case 'heartbeat':
          return;
        case 'log':
          return o.onLog?.(f.level, f.message);
        case 'outcome':
          over = true;
          socket.end();
          return resolve({ outcome: toRunOutcome(f.outcome), cancelDelivered: f.cancelDelivered });
      }
    };

    socket.on('data', (chunk: Buffer) => {
      if (over) return;
      try {
        for (const line of splitter.push(chunk)) if (!over) handle(decodeFrame(childFrameSchema, line, 'child'));
      } catch (err) {
        fail(err instanceof ProtocolError ? err : new ProtocolError(`step protocol: ${(err as Error).message}`));
      }
    });
    socket.on('close', () => fail(new ProtocolError(`the run child of ${log.runId} closed the step connection before sending its outcome`)));
    socket.on('error', () => {}); // 'close' follows
    log.onCancel?.(() => send({ t: 'cancel', cancel: cancelView() }));
    socket.resume();

    const entries = log.entries.filter((e): e is JournalEntry => e !== undefined);
    send({
      t: 'hello', runId: log.runId, workflow: log.workflow, input: log.input, entries: entries.length,
      caps: { open: log.open !== undefined, close: log.close !== undefined }, cancel: cancelView(), now: log.now(),
      maxPayloadBytes: o.maxPayloadBytes, cancelGraceMs: o.cancelGraceMs,
    });
    for (const entry of entries) send({ t: 'entry', entry });
  });
}

function toRunOutcome(w: WireOutcome): RunOutcome {
  if (w.type === 'interrupted') return { type: 'interrupted', cause: fromErrorInfo(w.cause as ErrorInfo) };
  return w as RunOutcome;
}
