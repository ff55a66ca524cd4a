// Run-level flow control (a workflow's `runs: { queue, key }`, docs/flow-control.md): a run
// holds a slot of its queue from its start to its end, sleeping and waiting included. The
// executor asks admit() before it executes a run: a run over the limit is not executed (it
// stays pending, in line, and uses no engine slot) and is dispatched again once its slot is
// granted. Slots and lines are the QueueManager's (src/runtime/queues.ts), shared with step
// bodies; a run's own slot has the step name RUN_SLOT and is kept across restarts.
import { runKeyOf, runPriorityOf } from '../../sdk/queue.ts';
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import type { Json } from '../domain/json.ts';
import { decodeValue } from '../domain/value-codec.ts';
import { RUN_SLOT } from '../ports/queue-store.ts';
import { ValidationError } from '../domain/errors.ts';
import type { SlotHold, SlotRequest } from '../ports/step-log.ts';
import type { QueueManager } from './queues.ts';

export type Admission = { type: 'go' } | { type: 'wait' } | { type: 'refused'; error: unknown };

const GO: Admission = { type: 'go' };
const WAIT: Admission = { type: 'wait' };
const RETRY_MS = 1_000;

export class RunGate {
  /** Runs of this process holding their slot. */
  private readonly holds = new Map<string, SlotHold>();
  /** The queue each of those runs holds its slot of. */
  private readonly queueOf = new Map<string, string>();
  /** Runs waiting for their slot (the controller gives the wait up). */
  private readonly waiting = new Map<string, AbortController>();

  constructor(
    private readonly queues: QueueManager,
    private readonly dispatch: (runId: string) => void,
  ) {}

  /** Whether the run may execute now. 'wait': it is in line (dispatched once its slot is
   *  granted), placed by its priority. 'refused': its key or priority function threw or gave
   *  a bad value (the run fails with it). */
  admit(runId: string, def: WorkflowDefinition, input: Json): Admission {
    const runs = def.runs;
    if (!runs?.queue || this.holds.has(runId)) return GO;
    if (this.waiting.has(runId)) return WAIT;
    let key: string;
    let priority: number;
    try {
      // The functions see the input as the run's code does (decoded: undefined, Date, Map...).
      const value = decodeValue(input);
      key = runKeyOf(def.name, runs, value);
      priority = runPriorityOf(def.name, runs, value);
    } catch (error) {
      return { type: 'refused', error };
    }
    const req = { queue: runs.queue!, key, runId, step: RUN_SLOT, priority };
    const name = runs.queue!.name;
    const now = this.queues.tryAcquire(req);
    if (now) {
      this.holds.set(runId, now);
      this.queueOf.set(runId, name);
      return GO;
    }
    const ac = new AbortController();
    this.waiting.set(runId, ac);
    this.queues.acquire(req, ac.signal).then(
      (hold) => {
        this.waiting.delete(runId);
        this.holds.set(runId, hold);
        this.queueOf.set(runId, name);
        this.dispatch(runId);
      },
      () => {
        if (this.waiting.get(runId) !== ac) return;
        this.waiting.delete(runId);
        // Not given up (ended() aborts): the grant's write failed. Asked again later.
        if (!ac.signal.aborted) setTimeout(() => this.dispatch(runId), RETRY_MS).unref();
      },
    );
    return WAIT;
  }

  /** The run ended (or was cancelled while in line): its slot, or its place, is freed. */
  ended(runId: string): void {
    this.queueOf.delete(runId);
    freeRun(this.holds, this.waiting, runId);
    this.queues.dropKept(runId, RUN_SLOT);
    this.queues.runEnded(runId);
  }

  /** A step of a run asking for a slot of the queue its run holds a slot of: refused, since
   *  the run would wait for itself (at a concurrency of 1 at once; at n, once n such runs
   *  hold every slot). Undefined: the step may ask. */
  stepConflict(req: SlotRequest): ValidationError | undefined {
    if (this.queueOf.size === 0) return undefined;
    const held = this.queueOf.get(req.runId);
    if (held === undefined || held !== (typeof req.queue === 'string' ? req.queue : req.queue.name)) return undefined;
    return new ValidationError(`step '${req.step}': queue '${held}' is this run's own queue (workflow option runs.queue), whose slot the run holds; a step waiting for it would wait for its own run: give the step another queue`);
  }
}

/** A run's slot released and its wait given up, whichever it has (run-flow.ts's too). */
export function freeRun(holds: Map<string, SlotHold>, waiting: Map<string, AbortController>, runId: string): void {
  const hold = holds.get(runId);
  if (hold) {
    holds.delete(runId);
    hold.release();
  }
  const wait = waiting.get(runId);
  if (wait) {
    waiting.delete(runId);
    wait.abort();
  }
}
