// How an executor gets a session for one execution of a run: in-process, a RunSession on the
// definition's function; for a workflow file, whatever the composition root bound (the Deno
// runner, which runs the same RunSession in a sandboxed child over the step protocol).
// Executors never know which: they hand over the run's step log and get an outcome back.
import type { StepLog } from '../ports/step-log.ts';
import type { StepOptions } from '../../sdk/types.ts';
import type { RegisteredWorkflow } from './registry.ts';
import type { RunOutcome } from './run-outcome.ts';
import { RunSession, type SessionLimits } from './run-session.ts';
import { withOutputSchema } from './boundary-schemas.ts';
import { withEmitCheck, type EmitCheck } from './emit-check.ts';

export interface Session {
  run(): Promise<RunOutcome>;
  /** A cancel was thrown into the code (the executor re-runs a suspended run otherwise). */
  readonly cancelDelivered: boolean;
  /** A workflow file's child after run() settled: its pid, how it ended and its output
   *  (bounded), kept per run for `runs describe`. */
  readonly output?: { pid: number; exit?: string; stdout: string; stderr: string };
  /** A workflow file's child after run() settled: whether it connected to the step protocol
   *  (false: it never could hear a cancel; absent for code workflows). */
  readonly connected?: boolean;
  /** Everything in flight waits for a queue slot (RunSession.slotBound): counted idle. */
  readonly slotBound?: boolean;
}

export interface SessionOptions extends SessionLimits {
  stepDefaults?: StepOptions;
  /** Checks ctx.emit payloads against the events' declared schemas (emit-check.ts). */
  checkEmit?: EmitCheck;
}

/** Runs a workflow file's execution; `version` is the run's recorded version (its snapshot). */
export type FileSessionFactory = (log: StepLog, wf: RegisteredWorkflow, version: string, o: SessionOptions) => Session;

export function sessionFor(given: StepLog, wf: RegisteredWorkflow, version: string, o: SessionOptions, files?: FileSessionFactory): Session {
  const log = o.checkEmit?.wanted() ? withEmitCheck(given, o.checkEmit) : given;
  // A definition with pinned versions runs the one the run started with.
  if (!wf.file) return new RunSession(log, withOutputSchema(wf.definition, wf.definition.forVersion?.(version) ?? wf.definition.fn), o.stepDefaults, { maxPayloadBytes: o.maxPayloadBytes, cancelGraceMs: o.cancelGraceMs, telemetry: o.telemetry, traceparent: o.traceparent, runLog: o.runLog, events: o.events });
  if (!files) {
    // Never run a file's code in the engine: without a runner this backend cannot run it.
    return { cancelDelivered: false, run: async () => ({ type: 'failed', error: { name: 'NotSupportedError', message: `workflow '${wf.definition.name}' is a workflow file: this backend has no Deno runner (docs/runner.md)` } }) };
  }
  return files(log, wf, version, o);
}
