// `runs.singleton` and `runs.rateLimit` on a backend whose QueueManager one process owns
// (SQLite), asked before the run's queue slot (run-gate.ts) when the run is first admitted.
// A singleton's slot is held from the run's start to its end (its row kept across a restart,
// as a run's queue slot is); a rate limit's start is counted (durably) and its slot given
// back at once. A run over either is skipped: it ends at once with output
// { outcome: 'skipped', reason }, its code never run.
import type { WorkflowDefinition } from '../../sdk/workflow.ts';
import { runFlowKeysOf, ratePeriodMs } from '../../sdk/run-flow.ts';
import type { Json } from '../domain/json.ts';
import { decodeValue } from '../domain/value-codec.ts';
import { RATE_SLOT, SINGLETON_SLOT, rateQueue, rateReason, singletonQueue, singletonReason } from '../domain/run-flow.ts';
import type { SlotHold } from '../ports/step-log.ts';
import type { QueueManager } from './queues.ts';
import { freeRun } from './run-gate.ts';

export type FlowAdmission = { type: 'go' } | { type: 'wait' } | { type: 'skipped'; reason: string } | { type: 'refused'; error: unknown };

const GO: FlowAdmission = { type: 'go' };
const WAIT: FlowAdmission = { type: 'wait' };

export class RunFlow {
  /** Runs of this process holding their singleton slot. */
  private readonly holds = new Map<string, SlotHold>();
  /** Runs waiting for the singleton slot of a run they cancelled. */
  private readonly waiting = new Map<string, AbortController>();
  /** Runs holding or waiting for a singleton slot, by queue and key (whom `cancel` cancels). */
  private readonly members = new Map<string, Set<string>>();
  private readonly memberOf = new Map<string, string>();
  /** Runs whose start the rate limit counted, until they end: a run then waiting in its
   *  queue's line is admitted again at its grant, and must not be counted (or skipped) twice. */
  private readonly rated = new Set<string>();

  constructor(
    private readonly queues: QueueManager,
    private readonly dispatch: (runId: string) => void,
    /** Cancels a run (a singleton in `cancel` mode), as runs.cancel with `by`. */
    private readonly cancel: (runId: string, by: string) => void,
  ) {}

  /** Whether the run may go on to its queue slot. `resumed`: it was admitted before (a
   *  restart, a retry): it is never skipped then, and waits for its singleton slot. */
  async admit(runId: string, def: WorkflowDefinition, input: Json, resumed: boolean): Promise<FlowAdmission> {
    const runs = def.runs;
    if (!runs || (!runs.singleton && !runs.rateLimit) || this.holds.has(runId)) return GO;
    if (this.waiting.has(runId)) return WAIT;
    let keys;
    try {
      keys = runFlowKeysOf(def.name, runs, decodeValue(input));
    } catch (error) {
      return { type: 'refused', error };
    }
    let single: SlotHold | undefined;
    if (runs.singleton && keys.singleton !== undefined) {
      const spec = singletonQueue(def.name);
      const req = { queue: spec, key: keys.singleton, runId, step: SINGLETON_SLOT };
      const group = `${spec.name}\u0000${keys.singleton}`;
      const now = this.queues.grantNow(req);
      if (now) {
        // A member before the grant is awaited: a run of its key admitted meanwhile (a burst
        // started at once) must see it, to cancel it or be skipped for it.
        this.join(group, runId);
        try {
          single = await now;
        } catch (err) {
          this.ended(runId);
          throw err;
        }
      } else {
        const others = [...new Set([...(this.members.get(group) ?? []), ...this.queues.keptRuns(spec.name, keys.singleton)])].filter((id) => id !== runId);
        if (!resumed && runs.singleton.mode === 'skip') return { type: 'skipped', reason: singletonReason(keys.singleton, others) };
        if (!resumed) for (const id of others) this.cancel(id, `runs.singleton (mode cancel): run ${runId} with the same key started`);
        this.join(group, runId);
        const ac = new AbortController();
        this.waiting.set(runId, ac);
        this.queues.acquire(req, ac.signal).then(
          (hold) => {
            this.waiting.delete(runId);
            this.holds.set(runId, hold);
            this.dispatch(runId);
          },
          () => {
            if (this.waiting.get(runId) === ac) this.waiting.delete(runId);
            if (!ac.signal.aborted) setTimeout(() => this.dispatch(runId), 1_000).unref();
          },
        );
        return WAIT;
      }
      this.holds.set(runId, single);
    }
    if (runs.rateLimit && keys.rate !== undefined && !resumed && !this.rated.has(runId)) {
      const periodMs = ratePeriodMs(runs.rateLimit);
      const now = this.queues.grantNow({ queue: rateQueue(def.name, runs.rateLimit.limit, periodMs), key: keys.rate, runId, step: RATE_SLOT });
      if (!now) {
        this.ended(runId);
        return { type: 'skipped', reason: rateReason(keys.rate, runs.rateLimit.limit, periodMs) };
      }
      // Counted (durably) when granted: the slot itself holds nothing.
      (await now).release();
      this.rated.add(runId);
    }
    return GO;
  }

  private join(group: string, runId: string): void {
    let set = this.members.get(group);
    if (!set) this.members.set(group, (set = new Set()));
    set.add(runId);
    this.memberOf.set(runId, group);
  }

  /** The run ended (or was skipped, or cancelled while waiting): its singleton slot is freed. */
  ended(runId: string): void {
    this.rated.delete(runId);
    freeRun(this.holds, this.waiting, runId);
    const group = this.memberOf.get(runId);
    if (group !== undefined) {
      this.memberOf.delete(runId);
      const set = this.members.get(group);
      set?.delete(runId);
      if (set?.size === 0) this.members.delete(group);
    }
    this.queues.dropKept(runId, SINGLETON_SLOT);
    // A rate slot is given back when granted; one kept from a crash in between goes too.
    this.queues.dropKept(runId, RATE_SLOT);
  }
}
