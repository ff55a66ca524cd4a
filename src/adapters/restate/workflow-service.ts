// One restate.workflow per Tranquil workflow: `run` (the run itself, keyed by run id),
// and the shared handlers `signal` (resolves a signal slot the run's signal queue handed out;
// signal-queue.ts), `retry` (resumes a parked-failed run), `pause` and `resume`
// (pause-handlers.ts).
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import * as z from 'zod';
import { describeIssue } from '../../domain/validate.ts';
import { MAX_CANCEL_BY } from '../../domain/cancel.ts';
import type { Json } from '../../domain/json.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import { identityCodec, openJson } from '../../domain/payload-codec.ts';
import { isTerminal, type RunStatus } from '../../domain/run-status.ts';
import type { RegisteredWorkflow } from '../../runtime/registry.ts';
import type { SessionOptions } from '../../runtime/session-factory.ts';
import { releasePromise, RestateRun, type CancelNote, type ParentRef, type RestateFiles, type RetryRequest, type RunHooks, type RunState } from './run-handler.ts';
import type { SlotRequest } from './signal-queue.ts';
import { pauseRun, resumeRun } from './pause-handlers.ts';
import { cancelCycleNow, cancelPromise } from './run-continue.ts';
import { signalPromise, type SignalEnvelope } from './step-log.ts';

/** Restate service names are identifiers: `-` is spelled `_`, and a prefix avoids clashes
 *  with anything else deployed on the same Restate. The mapping is one-to-one because
 *  Tranquil names never contain `_` followed by... they may: so `_` is doubled first. */
export function serviceName(workflow: string): string {
  return `tq_${workflow.replace(/_/g, '__').replace(/-/g, '_')}`;
}

export function workflowName(service: string): string | undefined {
  if (!service.startsWith('tq_')) return undefined;
  return service.slice(3).replace(/__|_/g, (m) => (m === '__' ? '_' : '-'));
}

export const RETENTION_DAYS = 7;

/** The `retry` handler's body: the engine sends the resume point it reported. */
const retryBody = z.object({ from: z.string().min(1).max(200).optional() }).strict();

/** The `cancelNote` handler's body: who asks to cancel (the engine validated it). */
const cancelNoteBody = z.object({ by: z.string().min(1).max(MAX_CANCEL_BY) }).strict();

/** What the engine sends to `run`: the input, and for a workflow file the version (snapshot
 *  digest) the trigger created the run at (a file may change while the endpoint serves). */
export interface RunRequest {
  input?: Json;
  version?: string;
  /** A child run's parent (docs/children.md): its end is sent there. */
  parent?: ParentRef;
  /** The run's W3C trace context (docs/observability.md): kept in state `~trace`. */
  traceparent?: string;
  /** When the run must end (docs/control.md), fixed when the run was written. */
  deadline?: number;
  /** 1: the run watches pause and parks after a cancel (docs/control.md); 2: also, before
   *  its code runs, it asks whether its workflow is paused (workflow-pause-object.ts). Absent
   *  (or lower) in runs forwarded by engines from before: they replay with the journal they
   *  started with. */
  control?: number;
  /** 1: the run's driver takes outcomes settled already without a race (driver.ts `eager`:
   *  a fan-out of n steps or children costs ~n, not ~n^2). Absent in runs forwarded by
   *  engines from before: they replay with the races their journals were written with. */
  driver?: number;
  /** runs.fork (docs/control.md): the recorded steps the run starts with (JournalEntry[],
   *  sealed); `version` is then the original's, for code workflows too. */
  fork?: Json;
}

/** `retentionMs`: how long Restate keeps a finished run and its journal (config
 *  retention.maxAge; default RETENTION_DAYS). `files`: workflow files (file-runs.ts). */
export function buildService(w: RegisteredWorkflow, hooks: RunHooks, limits: Omit<SessionOptions, 'stepDefaults'> = {}, opts: { files?: RestateFiles; retentionMs?: number } = {}) {
  const { files } = opts;
  const retentionMs = opts.retentionMs ?? RETENTION_DAYS * 86_400_000;
  const { definition, version } = w;
  return restate.workflow({
    name: serviceName(definition.name),
    handlers: {
      run: async (ctx: restate.WorkflowContext, req: RunRequest | null) => {
        const v = (w.file || req?.fork !== undefined) && typeof req?.version === 'string' ? req.version : version;
        // The input arrives sealed (executor.forward): Restate journals the request as sent.
        const parent = typeof req?.parent?.runId === 'string' && typeof req.parent.workflow === 'string' ? { runId: req.parent.runId, workflow: req.parent.workflow } : undefined;
        const traceparent = typeof req?.traceparent === 'string' && req.traceparent.length <= 256 ? req.traceparent : undefined;
        const deadline = typeof req?.deadline === 'number' ? req.deadline : undefined;
        const fork = req?.fork !== undefined ? openJson<JournalEntry[]>(hooks.codec ?? identityCodec, req.fork) : undefined;
        const run = new RestateRun(ctx, w, v, hooks, limits, files);
        run.eagerDriver = (req?.driver ?? 0) >= 1;
        return run.execute(openJson(hooks.codec ?? identityCodec, req?.input ?? null), parent, traceparent, deadline, (req?.control ?? 0) >= 1, Array.isArray(fork) ? fork : undefined, (req?.control ?? 0) >= 2);
      },

      // An approval releases a run blocked on its declaration (run-handler awaitApproval):
      // resolves the promise of the run's current look; the run then looks again.
      release: async (ctx: restate.WorkflowSharedContext): Promise<{ released: boolean }> => {
        const run = await ctx.get<RunState>('~run');
        if (run?.status !== 'blocked') return { released: false };
        const k = (await ctx.get<number>('~gate')) ?? 0;
        const p = ctx.promise<boolean>(releasePromise(k));
        if ((await p.peek()) !== undefined) return { released: false };
        await p.resolve(true);
        return { released: true };
      },

      // Called by the run's signal queue (signal-queue.ts) with the slot it handed out, or
      // with none when its counter is unknown (then slot 1 first, and the first free slot
      // after it is probed for, once). The slot is resolved at once: one journaled command.
      signal: async (ctx: restate.WorkflowSharedContext, req: SlotRequest) => {
        const run = await ctx.get<RunState>('~run');
        if (run && isTerminal(run.status as RunStatus)) {
          throw new restate.TerminalError(`run ${ctx.key} already finished (${run.status})`, { errorCode: 409 });
        }
        const t = req.t ?? (await ctx.date.now());
        const envelope: SignalEnvelope = { v: req.payload ?? null, t };
        const first = req.slot ?? 1;
        try {
          await ctx.promise<SignalEnvelope>(signalPromise(req.name, first)).resolve(envelope);
          return { slot: first };
        } catch (err) {
          // Taken: a run from before the queue existed, or a queue whose counter expired.
          if (!(err instanceof restate.TerminalError)) throw err;
        }
        // Slot k of a name is resolved by the k-th signal; a wait takes slots in order.
        for (let slot = first + 1; slot <= 1_000_000; slot++) {
          const promise = ctx.promise<SignalEnvelope>(signalPromise(req.name, slot));
          if ((await promise.peek()) !== undefined) continue;
          try {
            await promise.resolve(envelope);
            return { slot };
          } catch (err) {
            if (err instanceof restate.TerminalError) continue; // lost a race for this slot
            throw err;
          }
        }
        throw new restate.TerminalError(`signal queue of '${req.name}' is full`);
      },

      // The engine notes who asks to cancel before it asks Restate to cancel the invocation:
      // the run reads it when it ends cancelled (run-handler cancelNote). The first asker stays.
      cancelNote: async (ctx: restate.WorkflowSharedContext, body: unknown): Promise<{ noted: boolean }> => {
        const req = cancelNoteBody.safeParse(body ?? {});
        if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'cancel note'), { errorCode: 400 });
        const p = ctx.promise<CancelNote>(cancelPromise(await cancelCycleNow(ctx)));
        if ((await p.peek()) !== undefined) return { noted: false };
        try {
          await p.resolve({ by: req.data.by, t: await ctx.date.now() });
        } catch (err) {
          if (err instanceof restate.TerminalError) return { noted: false }; // a concurrent cancel noted first
          throw err;
        }
        return { noted: true };
      },

      // runs.pause / runs.resume (docs/control.md): durable promises the run watches.
      pause: (ctx: restate.WorkflowSharedContext, body: unknown) => pauseRun(ctx, body),
      resume: (ctx: restate.WorkflowSharedContext, body: unknown) => resumeRun(ctx, body),

      retry: async (ctx: restate.WorkflowSharedContext, body: unknown) => {
        const req = retryBody.safeParse(body ?? {});
        if (!req.success) throw new restate.TerminalError(describeIssue(req.error.issues, 'retry request'), { errorCode: 400 });
        const run = await ctx.get<RunState>('~run');
        const cycle = (await ctx.get<number>('~cycle')) ?? 0;
        if (run?.status !== 'failed') throw new restate.TerminalError(`run ${ctx.key} is ${run?.status ?? 'pending'}; only a failed run can be retried`, { errorCode: 409 });
        const resolved: RetryRequest = { ...req.data, t: await ctx.date.now() };
        await ctx.promise<RetryRequest>(`~retry#${cycle}`).resolve(resolved);
        return { cycle: cycle + 1 };
      },
    },
    options: {
      // Numbers (ms), not strings: a string duration is silently read as 0 by the server.
      workflowRetention: retentionMs,
      journalRetention: retentionMs,
      // A run idle this long (sleeping, waiting, parked) suspends and frees its endpoint
      // stream; it is replayed when it wakes. The server default holds it for a minute.
      inactivityTimeout: 10_000,
      // Invocation-level retries only cover crashes and an unreachable endpoint: step
      // retries are the engine's own loop.
      retryPolicy: { initialInterval: 100, exponentiationFactor: 2, maxInterval: 2000, maxAttempts: 100_000, onMaxAttempts: 'pause' },
    },
  });
}
