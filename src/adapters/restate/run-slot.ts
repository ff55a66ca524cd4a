// Run-level flow control on Restate (a workflow's `runs: { queue, key, priority }`,
// docs/flow-control.md): the run's own slot, from the same queue object as step slots
// (queue-object.ts), asked before the run's code starts (the run shows `pending` while in
// line: it has written no `~run` state yet) and released at its end (succeeded, cancelled,
// or failed and parked: a retry asks again). Like a step's, the slot belongs to the run's
// durable invocation: a replay (a restart, another replica) finds the grant in its journal.
import { setMaxListeners } from 'node:events';
import { runKeyOf, runPriorityOf } from '../../../sdk/queue.ts';
import { ratePeriodMs, runFlowKeysOf } from '../../../sdk/run-flow.ts';
import { RATE_SLOT, SINGLETON_SLOT, SlotRefused, rateQueue, rateReason, singletonQueue, singletonReason } from '../../domain/run-flow.ts';
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
  /** The run's singleton slot (runs.singleton, src/domain/run-flow.ts), held to its end. */
  private single: SlotHold | undefined;

  constructor(
    private readonly log: RestateStepLog,
    private readonly def: WorkflowDefinition,
    private readonly input: Json,
    /** Cancels these runs (a singleton in `cancel` mode), as runs.cancel with `by`: a
     *  journaled step of this run. */
    private readonly cancelRuns?: (runIds: string[], by: string) => Promise<void>,
  ) {}

  /** Waits for the run's slots (nothing when the workflow has no `runs` or they are held).
   *  Returns why the run is skipped (runs.singleton in `skip` mode, runs.rateLimit), only at
   *  its first admission (`first`; a retried run waits for its singleton slot instead).
   *  Rejects with the run's CancelledError when cancelled in line (it has left the line
   *  then), or with a key or priority function's error. */
  async acquire(first = true): Promise<string | undefined> {
    const runs = this.def.runs;
    if (!runs) return undefined;
    // As the run's code sees its input (decoded: undefined, Date, Map...), as on SQLite.
    const value = decodeValue(this.input);
    const keys = runFlowKeysOf(this.def.name, runs, value);
    const key = runKeyOf(this.def.name, runs, value);
    const priority = runPriorityOf(this.def.name, runs, value);
    const ask = this.log.runSlot;
    if (!ask) throw new NotSupportedError(`workflow '${this.def.name}' options.runs: this engine serves no queues`);
    const runId = this.log.runId;
    if (runs.singleton && keys.singleton !== undefined && !this.single) {
      const req = { queue: singletonQueue(this.def.name), key: keys.singleton, runId, step: SINGLETON_SLOT };
      if (first && runs.singleton.mode === 'skip') {
        try {
          this.single = await ask({ ...req, noWait: true }, NEVER);
        } catch (err) {
          if (!(err instanceof SlotRefused)) throw err;
          return singletonReason(keys.singleton, err.others.filter((id) => id !== runId));
        }
      } else {
        // `cancel`: in line first, then the runs before it are cancelled (a burst's later
        // run sees the earlier one waiting and cancels it too). A retry only waits.
        const cancel = first ? this.cancelRuns : undefined;
        const by = `runs.singleton (mode cancel): run ${runId} with the same key started`;
        this.single = await ask({ ...req, ...(cancel ? { whenQueued: (others: string[]) => cancel(others.filter((id) => id !== runId), by) } : {}) }, NEVER);
      }
    }
    if (runs.rateLimit && keys.rate !== undefined && first) {
      const periodMs = ratePeriodMs(runs.rateLimit);
      try {
        // Counted when granted: the slot itself holds nothing.
        (await ask({ queue: rateQueue(this.def.name, runs.rateLimit.limit, periodMs), key: keys.rate, runId, step: RATE_SLOT, noWait: true }, NEVER)).release();
      } catch (err) {
        if (!(err instanceof SlotRefused)) throw err;
        this.release();
        return rateReason(keys.rate, runs.rateLimit.limit, periodMs);
      }
    }
    if (runs.queue && !this.hold) {
      this.hold = await ask({ queue: runs.queue, key, runId, step: RUN_SLOT, ...(priority ? { priority } : {}) }, NEVER);
      this.log.ownQueue = runs.queue.name;
    }
    return undefined;
  }

  /** The run ended: its slots are given back, and the queues have taken them back when this
   *  resolves (a run of the key asked right after the end finds it free). */
  async leave(): Promise<void> {
    const holds = [this.hold, this.single];
    this.hold = undefined;
    this.single = undefined;
    this.log.ownQueue = undefined;
    await Promise.all(holds.map((h) => (h?.releaseAwaited ? h.releaseAwaited() : h?.release())));
  }

  release(): void {
    this.hold?.release();
    this.hold = undefined;
    this.single?.release();
    this.single = undefined;
    this.log.ownQueue = undefined;
  }
}
