// Run-level flow control on Restate (a workflow's `runs: { queue, key, priority }`,
// docs/flow-control.md): the run's own slot, from the same queue object as step slots
// (queue-object.ts), asked before the run's code starts (the run shows `pending` while in
// line: it has written no `~run` state yet) and released at its end (succeeded, cancelled,
// or failed and parked: a retry asks again). Like a step's, the slot belongs to the run's
// durable invocation: a replay (a restart, another replica) finds the grant in its journal.
import { setMaxListeners } from 'node:events';
import { runKeyOf, runPriorityOf } from '../../../sdk/queue.ts';
import type { WorkflowDefinition } from '../../../sdk/workflow.ts';
import { NotSupportedError } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import { decodeValue } from '../../domain/value-codec.ts';
import { RUN_SLOT } from '../../ports/queue-store.ts';
import type { SlotHold } from '../../ports/step-log.ts';
import type { RestateStepLog } from './step-log.ts';

/** A wait for the run's slot is ended by a cancel Restate delivers (the driver rejects it),
 *  never by an abort of its own. Every run in line listens on it until its grant (none ever
 *  fires): no listener limit, which warned of a leak past 10 runs waiting in one process. */
const NEVER = new AbortController().signal;
setMaxListeners(0, NEVER);

export class RunSlot {
  private hold: SlotHold | undefined;

  constructor(
    private readonly log: RestateStepLog,
    private readonly def: WorkflowDefinition,
    private readonly input: Json,
  ) {}

  /** Waits for the run's slot (nothing when the workflow has no `runs` or it is held).
   *  Rejects with the run's CancelledError when cancelled in line (it has left the line
   *  then), or with the key or priority function's error. */
  async acquire(): Promise<void> {
    const runs = this.def.runs;
    if (!runs || this.hold) return;
    // As the run's code sees its input (decoded: undefined, Date, Map...), as on SQLite.
    const value = decodeValue(this.input);
    const key = runKeyOf(this.def.name, runs, value);
    const priority = runPriorityOf(this.def.name, runs, value);
    if (!this.log.runSlot) throw new NotSupportedError(`workflow '${this.def.name}' options.runs: this engine serves no queues`);
    this.hold = await this.log.runSlot({ queue: runs.queue, key, runId: this.log.runId, step: RUN_SLOT, ...(priority ? { priority } : {}) }, NEVER);
    this.log.ownQueue = runs.queue.name;
  }

  release(): void {
    this.hold?.release();
    this.hold = undefined;
    this.log.ownQueue = undefined;
  }
}
