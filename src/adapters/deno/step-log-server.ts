// Serves one run's StepLog to its Deno child over an authenticated connection: delivers the
// journal (hello + one entry frame per recorded position), answers each request by calling
// the engine's own step log (on SQLite: the executor's journal, whose promises resolve only
// once the write committed, so a `record` reply means durable), forwards cancels, and ends
// with the child's outcome. A malformed or oversized frame, or a connection that closes
// before the outcome, ends the attempt with a ProtocolError; nothing committed changes.
import type { Socket } from 'node:net';
import { CancelledError, NotSupportedError, ValidationError, fromErrorInfo, toErrorInfo, type ErrorInfo } from '../../domain/errors.ts';
import { CapabilityUnavailableError, type CapabilityRequest } from '../../domain/capability.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import {
  FRAME_ENVELOPE_BYTES, LineSplitter, ProtocolError, childFrameSchema, decodeFrame, encodeFrame, type ReceivedChildFrame, type EngineFrame, type WireOutcome,
} from '../../domain/runner-protocol.ts';
import type { ChildObserver } from './child-observer.ts';
import type { AttemptResult, SlotHold, StepLog } from '../../ports/step-log.ts';
import type { QueueSpec } from '../../domain/rate-limit.ts';
import type { RunOutcome } from '../../runtime/run-outcome.ts';
import { DEFAULT_CANCEL_GRACE_MS } from '../../domain/cancel.ts';
import { setLongTimeout } from '../../runtime/long-timer.ts';
import { idempotencyKey } from '../../domain/step-names.ts';
import type { UnusedGrants } from './unused-grants.ts';

export interface ServedOutcome {
  outcome: RunOutcome;
  cancelDelivered: boolean;
}

export interface ServeOptions {
  maxPayloadBytes: number;
  cancelGraceMs?: number;
  /** `log` frames from the child. */
  onLog?: (level: string, message: string) => void;
  /** The execution's spans and its run log lines (`runLog` frames): child-observer.ts. */
  observe?: ChildObserver;
  /** The watchdog; absent: none (the child is trusted to answer). */
  watch?: Watch;
  /** Resolves once the child crashed (it ended itself: a non-zero exit, an abort, V8 out of
   *  memory), with the reason; never for a child killed from outside or by the engine. */
  crashed?: Promise<string>;
  /** The queues the run's version declares (`workflow(name, { queues })`, as described at
   *  registration), by name: the only ones its `slot` frames may name. Absent: none. */
  queues?: ReadonlyMap<string, QueueSpec>;
  /** A granted slot's step attempt must begin within `deadlineMs` of the grant, else the slot
   *  is released and counted against the file's version (unused-grants.ts). Absent: no bound. */
  grants?: { deadlineMs: number; unused: UnusedGrants; file: string; onUnused?: (line: string) => void };
}

/** One `slot` ask of this child (flow control): waiting (`abort` gives up its place) or held. */
interface SlotAsk {
  step: string;
  queue: string;
  abort: AbortController;
  hold?: SlotHold;
  over: boolean;
  /** Held, its step's attempt not begun yet: the deadline's timer (ServeOptions.grants). */
  unused?: NodeJS.Timeout;
}

/** What the watchdog needs: its limits, the run's verdicts and the child's kill by PID. */
export interface Watch {
  /** Sent in hello: how often the child sends a heartbeat. */
  heartbeatMs: number;
  /** A child silent this long (no frame at all) is killed. */
  heartbeatTimeoutMs: number;
  /** Past a step's own timeout, how long the engine waits for the child's own TimeoutError
   *  before it kills the child (a body that blocks the event loop never lets it fire). */
  stepTimeoutSlackMs: number;
  /** After a cancel frame, past the cleanup grace (at once for a forced cancel or the engine
   *  stopping), how long the child has to send its outcome before it is killed. */
  cancelKillMs: number;
  /** Failed attempts of killed children, by `<seq>/<attempt>`, kept for the run's next
   *  execution: its child's RunSession gets this outcome for that attempt (so it counts as a
   *  failed attempt and the retry policy applies) instead of running the body again. */
  verdicts: Map<string, AttemptResult>;
  kill(): void;
}

const verdictKey = (seq: number, attempt: number) => `${seq}/${attempt}`;

/** Slot asks (waiting or held) one execution may have open at once. */
export const MAX_OPEN_SLOTS = 1_000;

export function serveStepLog(socket: Socket, log: StepLog, o: ServeOptions): Promise<ServedOutcome> {
  const ob = o.observe;
  if (!ob) return serve(socket, log, o);
  return serve(socket, log, o).then(
    (served) => (ob.ended(served.outcome), served),
    (err: unknown) => {
      ob.ended(undefined);
      throw err;
    },
  );
}

function serve(socket: Socket, log: StepLog, o: ServeOptions): Promise<ServedOutcome> {
  return new Promise<ServedOutcome>((resolve, reject) => {
    let over = false;
    const attempts = new Map<number, (r: AttemptResult) => void>();
    // Watchdog state: attempts whose body runs now, the silence timer, the cancel backstop.
    const running = new Map<number, { seq: number; name: string; kind: string; attempt: number; disarm?: () => void }>();
    let silence: NodeJS.Timeout | undefined;
    let cancelKill: (() => void) | undefined;
    const w = o.watch;
    // Capability calls served for this child are told to stop when its execution ends.
    const served = new AbortController();
    // Flow control: this child's slot asks by request id, and which ask each step has open.
    // The engine holds every slot; a frame names only this child's own asks.
    const slots = new Map<number, SlotAsk>();
    const slotOfStep = new Map<string, number>();
    // Steps whose grant went unused and was released, with the line their late attempt fails with.
    const lapsed = new Map<string, string>();
    const endSlot = (sid: number | undefined, reason: string) => {
      const a = sid === undefined ? undefined : slots.get(sid);
      if (!a || a.over) return;
      a.over = true;
      clearTimeout(a.unused);
      if (slotOfStep.get(a.step) === sid) slotOfStep.delete(a.step);
      if (a.hold) a.hold.release();
      else a.abort.abort(new CancelledError(reason));
    };
    /** `keepSlots`: the execution ended without its outcome on a log whose slots are the
     *  run's (Restate: the invocation's retry replays the asks and takes them over). */
    const disarm = (keepSlots = false) => {
      if (!keepSlots) for (const sid of slots.keys()) endSlot(sid, `the execution of run ${log.runId} in its child ended`);
      served.abort(new ProtocolError(`the execution of run ${log.runId} in its child ended`));
      clearTimeout(silence);
      cancelKill?.();
      for (const r of running.values()) r.disarm?.();
      log.settleWith?.(undefined);
      wake();
    };
    const splitter = new LineSplitter(o.maxPayloadBytes + FRAME_ENVELOPE_BYTES, 'child');
    // Settling (a log whose journal order must not depend on frame timing: Restate): frames
    // sent, the child's last `idle`, and who waits for the child to catch up.
    let sentFrames = 0;
    let idleSeen = 0;
    let caughtUp: (() => void)[] = [];
    const settled = () => over || idleSeen >= sentFrames;
    const wake = () => {
      if (!settled()) return;
      for (const r of caughtUp.splice(0)) r();
    };
    const send = (f: EngineFrame) => {
      if (over) return;
      sentFrames++;
      socket.write(encodeFrame(f));
    };
    const fail = (err: Error) => {
      if (over) return;
      over = true;
      disarm(log.slotsOutliveSession === true);
      socket.destroy();
      reject(err);
    };
    /** The watchdog ends this execution: the child is killed by its PID. */
    const killWith = (outcome: ServedOutcome) => {
      if (over || !w) return;
      over = true;
      disarm();
      socket.destroy();
      w.kill();
      resolve(outcome);
    };
    /** A frame (or a pattern of frames) this session cannot accept: from a broken or hostile
     *  child, its run fails with the reason and the child is killed (a replay would do the same). */
    const refuse = (e: ProtocolError) => {
      if (w) return killWith({ outcome: { type: 'failed', error: toErrorInfo(e) as ErrorInfo }, cancelDelivered: false });
      fail(e);
    };
    /** A grant whose step attempt did not begin in time (ServeOptions.grants): released. */
    const grantUnused = (sid: number) => {
      const a = slots.get(sid);
      const g = o.grants;
      if (over || !a || a.over || !g) return;
      const line = `step '${a.step}': its slot of queue '${a.queue}' was released: no attempt of the step began within ${g.deadlineMs}ms of the grant`;
      endSlot(sid, line);
      lapsed.set(a.step, line);
      g.onUnused?.(line);
      if (g.unused.add(`step '${a.step}' of queue '${a.queue}' in run ${log.runId}`)) refuse(new ProtocolError(g.unused.reason(g.file, g.deadlineMs)));
    };
    const failAttempts = (which: Iterable<{ seq: number; name: string; attempt: number }>, error: ErrorInfo) => {
      for (const r of which) {
        w!.verdicts.set(verdictKey(r.seq, r.attempt), { ok: false, error, terminal: false });
        o.observe?.attemptEnded(r.name, r.attempt, false, error); // its span ends with the kill's reason
      }
      // Retried in a new child at once (the retry policy's delay is applied by that child's session).
      killWith({ outcome: { type: 'suspended', status: 'retrying', wakeAt: log.now(), entries: [], signals: [] }, cancelDelivered: false });
    };
    const heard = () => {
      if (!w || over) return;
      clearTimeout(silence);
      silence = setTimeout(() => {
        const pid = `the run child of ${log.runId}`;
        const error = { name: 'HeartbeatTimeoutError', message: `${pid} sent nothing for ${w.heartbeatTimeoutMs}ms (its event loop was blocked) and was killed` };
        if (running.size > 0) return failAttempts(running.values(), { ...error, message: `step '${[...running.values()][0]!.name}': ${error.message}` });
        // Blocked outside any step: replaying the same code would block again.
        killWith({ outcome: { type: 'failed', error: { ...error, message: `${error.message} while its workflow code ran outside any step` } }, cancelDelivered: false });
      }, w.heartbeatTimeoutMs);
    };
    // A pause (runs.pause) travels on every reply, and is pushed as asked (a `pause` frame,
    // below, where the log tells it): the child's session checks it at its next step call. A child that ignores it runs on only to its next suspension, where the
    // engine's own log pauses the run (as before): it gains nothing.
    const paused = () => (log.pauseRequested ? { pause: log.pauseRequested() } : {});
    const reply = (id: number, p: Promise<unknown> | unknown) =>
      Promise.resolve(p).then(
        (value) => send(value === undefined ? { t: 'reply', id, now: log.now(), ok: true, ...paused() } : { t: 'reply', id, now: log.now(), ok: true, value, ...paused() }),
        (err: unknown) => send({ t: 'reply', id, now: log.now(), ok: false, error: toErrorInfo(err) as ErrorInfo, ...paused() }),
      );
    const cancelView = () => ({ requested: log.cancelRequested(), state: log.cancelState?.() ?? 'none' });

    const handle = (f: ReceivedChildFrame, line: string): void => {
      switch (f.t) {
        case 'attempt': {
          // Begun: its slot (if any) is in use now.
          const asked = slotOfStep.get(f.call.name);
          if (asked !== undefined) clearTimeout(slots.get(asked)?.unused);
          // Its grant lapsed before this attempt came: no slot, so no body; a failed attempt
          // the step's retry policy retries (asking for a slot again).
          const late = lapsed.get(f.call.name);
          if (late !== undefined && asked === undefined) {
            lapsed.delete(f.call.name);
            return void reply(f.id, { ok: false, terminal: false, error: { name: 'SlotLapsedError', message: late } } satisfies AttemptResult);
          }
          // This attempt's body hung a killed child: it failed; the session here counts it.
          const verdict = w?.verdicts.get(verdictKey(f.call.seq, f.attempt));
          // The step's slot (if it asked one) is held by this attempt alone: released as the
          // attempt ends, before its outcome is recorded, as in-process (queuedAttempt).
          const released = <T>(r: T): T => (endSlot(slotOfStep.get(f.call.name), `step '${f.call.name}' ended`), r);
          if (verdict) {
            w!.verdicts.delete(verdictKey(f.call.seq, f.attempt));
            o.observe?.verdictServed(f.call.name, f.attempt);
            return void reply(f.id, released(verdict));
          }
          const startBody = () =>
            new Promise<AttemptResult>((r) => {
              attempts.set(f.id, r);
              const entry: { seq: number; name: string; kind: string; attempt: number; disarm?: () => void } = { seq: f.call.seq, name: f.call.name, kind: f.call.kind, attempt: f.attempt };
              if (w && f.timeoutMs !== undefined) {
                // Any accepted step timeout (up to 100 years): a plain setTimeout of 30 days
                // overflowed and killed the child at once with a TimeoutError.
                entry.disarm = setLongTimeout(() => failAttempts([entry], {
                  name: 'TimeoutError',
                  message: `step '${f.call.name}' attempt ${f.attempt} timed out after ${f.timeoutMs}ms; its child did not answer within ${w.stepTimeoutSlackMs}ms more and was killed`,
                }), f.timeoutMs + w.stepTimeoutSlackMs);
              }
              running.set(f.id, entry);
              o.observe?.attemptBegan(f.call.name, f.call.kind, f.attempt);
              send({ t: 'run', id: f.id });
            });
          return void reply(f.id, log.attempt(f.call, f.attempt, startBody).then(released, (err: unknown) => {
            throw released(err);
          }));
        }
        case 'attemptResult': {
          const done = attempts.get(f.id);
          if (!done) throw new ProtocolError(`attemptResult ${f.id} answers no attempt in flight`);
          attempts.delete(f.id);
          const ran = running.get(f.id);
          ran?.disarm?.();
          running.delete(f.id);
          if (ran) o.observe?.attemptEnded(ran.name, ran.attempt, f.result.ok, f.result.ok ? undefined : (f.result.error as ErrorInfo));
          return done(f.result as AttemptResult);
        }
        case 'record': {
          // Its step event once the write is durable, before the child hears back (in order).
          const entry = f.entry as JournalEntry;
          return void reply(f.id, log.record(entry).then((r) => (o.observe?.recorded(entry), r)));
        }
        case 'takeSignal': {
          const entry = f.entry as JournalEntry;
          return void reply(f.id, log.takeSignal(f.signalName, entry).then((got) => (got && o.observe?.signaled(entry), got ?? null)));
        }
        case 'emit':
          return void reply(f.id, log.emit(f.entry as JournalEntry, f.event as { name: string; payload: Json; id: string }).then((r) => r ?? null));
        case 'capability': {
          // A provider is called here, in the engine's process, never in the child. The
          // run id, key and attempt come from this session (issue 36: a frame carrying another
          // run's id and key got that run's result): the frame only names which of its own
          // capability attempts in flight it belongs to.
          const r = f.request;
          const own = [...running.values()].find((a) => a.kind === 'use' && a.attempt === r.attempt && idempotencyKey(log.runId, a.name) === r.idempotencyKey);
          if (r.runId !== log.runId || !own) {
            throw new ProtocolError(`capability frame for run '${r.runId}', key '${r.idempotencyKey}', attempt ${r.attempt}: not a capability step attempt of run ${log.runId} in flight (a child speaks only for its own run)`);
          }
          const req: CapabilityRequest = { runId: log.runId, capability: r.capability, affinity: r.affinity, input: r.input as Json, idempotencyKey: idempotencyKey(log.runId, own.name), attempt: own.attempt };
          return void reply(f.id, log.capability ? log.capability(req, served.signal) : Promise.reject(new CapabilityUnavailableError(req.capability, req.affinity)));
        }
        case 'startChild':
          // The parent is the run this log serves, whatever the child claims.
          return void reply(f.id, log.startChild ? log.startChild({ ...f.request, input: f.request.input as Json, parent: { ...f.request.parent, runId: log.runId } }) : Promise.reject(new NotSupportedError('child runs are not available on this backend')));
        case 'sendSignal':
          return void reply(f.id, log.sendSignal ? log.sendSignal(f.runId, f.name, f.payload as Json).then(() => null) : Promise.reject(new NotSupportedError('signals between runs are not available on this backend')));
        case 'open':
          return void reply(f.id, Promise.resolve(log.open?.(f.call)).then((r) => r ?? null));
        case 'close':
          return void reply(f.id, Promise.resolve(log.close?.(f.position)).then((r) => r ?? null));
        case 'slot': {
          const spec = o.queues?.get(f.queue);
          if (!log.slot) return void reply(f.id, Promise.reject(new NotSupportedError(`step '${f.step}': queues are not available on this backend`)));
          if (!spec) {
            return void reply(f.id, Promise.reject(new ValidationError(`step '${f.step}': unknown queue '${f.queue}': a workflow file may name only the queues it declares (workflow(name, { queues: [queue('${f.queue}', {...})] }, ...))`)));
          }
          if (o.grants?.unused.barred) throw new ProtocolError(o.grants.unused.reason(o.grants.file, o.grants.deadlineMs));
          if (slots.has(f.id) || slotOfStep.has(f.step)) throw new ProtocolError(`slot frame ${f.id} for step '${f.step}': that step already asks for or holds a slot (one at a time per step)`);
          // A bound on the asks one execution keeps open (a fan-out of queued steps stays far
          // below it): a child cannot fill a queue's line with asks no body will use.
          if (slotOfStep.size >= MAX_OPEN_SLOTS) throw new ProtocolError(`slot frame ${f.id} for step '${f.step}': ${MAX_OPEN_SLOTS} slot asks already open in this execution`);
          const ask: SlotAsk = { step: f.step, queue: f.queue, abort: new AbortController(), over: false };
          slots.set(f.id, ask);
          slotOfStep.set(f.step, f.id);
          lapsed.delete(f.step); // asked again: the next attempt is this ask's
          // The run and the step are this session's; the child names only queue, key, step.
          const req = { queue: spec, key: f.key, runId: log.runId, step: f.step };
          const now = log.slotNow?.(req);
          const granted = now ? Promise.resolve(now) : log.slot(req, ask.abort.signal);
          return void reply(f.id, granted.then(
            (hold) => {
              // Given up (or the execution ended) while the grant was on its way.
              if (ask.over) throw (hold.release(), new CancelledError(`step '${f.step}' gave up its slot of '${f.queue}'`));
              ask.hold = hold;
              const id = f.id;
              if (o.grants) ask.unused = setTimeout(() => grantUnused(id), o.grants.deadlineMs);
              return { grantedAt: hold.grantedAt ?? log.now() };
            },
            (err: unknown) => {
              ask.over = true;
              if (slotOfStep.get(f.step) === f.id) slotOfStep.delete(f.step);
              throw err;
            },
          ));
        }
        case 'release':
          if (!slots.has(f.slot)) throw new ProtocolError(`release of slot ${f.slot}: this child asked for no such slot`);
          return endSlot(f.slot, `step '${slots.get(f.slot)!.step}' gave up its slot`);
        case 'heartbeat':
          return;
        case 'idle':
          idleSeen = Math.max(idleSeen, f.seen);
          return wake();
        case 'log':
          return o.onLog?.(f.level, f.message);
        case 'runLog':
          // Checked there (strict, bounded): a bad line is refused without failing the run.
          return o.observe?.line(f, Buffer.byteLength(line));
        case 'outcome':
          over = true;
          disarm();
          socket.end();
          return resolve({ outcome: toRunOutcome(f.outcome), cancelDelivered: f.cancelDelivered });
      }
    };

    socket.on('data', (chunk: Buffer) => {
      if (over) return;
      heard();
      try {
        for (const line of splitter.push(chunk)) if (!over) handle(decodeFrame(childFrameSchema, line, 'child'), line);
      } catch (err) {
        // Malformed, or naming another run: nothing else is touched.
        refuse(err instanceof ProtocolError ? err : new ProtocolError(`step protocol: ${(err as Error).message}`));
      }
    });
    // A crash is a failure with its reason (issue 36): the attempts in flight fail (their
    // retry policy applies in the next child), or the run, outside any step (a replay would
    // crash the same way). Killed from outside, the run resumes as before.
    const crashed = (reason: string) => {
      const error = { name: 'ChildCrashedError', message: reason };
      if (running.size > 0) return failAttempts(running.values(), { ...error, message: `step '${[...running.values()][0]!.name}': ${reason}` });
      killWith({ outcome: { type: 'failed', error: { ...error, message: `${reason} while its workflow code ran outside any step` } }, cancelDelivered: false });
    };
    socket.on('close', () => {
      const closed = new ProtocolError(`the run child of ${log.runId} closed the step connection before sending its outcome`);
      if (over || !w || !o.crashed) return fail(closed);
      const grace = new Promise<undefined>((r) => setTimeout(() => r(undefined), 2_000).unref());
      void Promise.race([o.crashed, grace]).then((reason) => (reason === undefined ? fail(closed) : crashed(reason)));
    });
    socket.on('error', () => {}); // 'close' follows
    log.onCancel?.(() => {
      const cancel = cancelView();
      send({ t: 'cancel', cancel });
      if (!w || over) return;
      // The backstop: a child that does not end after the cancel (its cleanup's grace, or at
      // once when forced or the engine stops) is killed by its PID.
      const graceful = cancel.state === 'requested' && !cancel.requested;
      cancelKill?.();
      // Any accepted cancelGrace (up to 100 years): a plain setTimeout past 24.8 days killed
      // the child after 1 ms, cutting its cleanup short.
      cancelKill = setLongTimeout(() => {
        if (cancel.state === 'none') return fail(new ProtocolError(`the run child of ${log.runId} did not stop within ${w.cancelKillMs}ms of the engine stopping`)), w.kill();
        killWith({ outcome: { type: 'cancelled' }, cancelDelivered: true });
      }, (graceful ? (o.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS) : 0) + w.cancelKillMs);
    });
    socket.resume();

    const entries = log.entries.filter((e): e is JournalEntry => e !== undefined);
    // Before the log waits for its next outcome, the child has reacted to every frame sent.
    const settle = log.settleWith !== undefined;
    log.settleWith?.(() => (settled() ? Promise.resolve() : new Promise<void>((r) => caughtUp.push(r))));
    send({
      t: 'hello', runId: log.runId, workflow: log.workflow, input: log.input, entries: entries.length,
      caps: { open: log.open !== undefined, close: log.close !== undefined, journalClock: log.journalClock === true, settle, queues: log.slot !== undefined }, cancel: cancelView(), now: log.now(),
      maxPayloadBytes: o.maxPayloadBytes, cancelGraceMs: o.cancelGraceMs, ...(w ? { heartbeatMs: w.heartbeatMs } : {}),
      ...(log.deadline !== undefined ? { deadline: log.deadline } : {}),
      ...(o.observe?.lowestLevel ? { runLog: o.observe.lowestLevel } : {}),
      ...paused(),
    });
    heard();
    for (const entry of entries) send(log.completedOutside?.(entry) ? { t: 'entry', entry, outside: true } : { t: 'entry', entry });
    // After the journal (the child reads hello and the entries first), in the same tick as
    // hello's `pause`, so no change falls between: a pause asked while the child has no
    // request in flight reaches it now. It only stops the child (docs/control.md).
    log.onPause?.((pause) => send({ t: 'pause', pause }));
  });
}

function toRunOutcome(w: WireOutcome): RunOutcome {
  if (w.type === 'interrupted') return { type: 'interrupted', cause: fromErrorInfo(w.cause as ErrorInfo) };
  return w as RunOutcome;
}
