// Lifecycle notifications (issue 15): `engine.on('run.failed' | 'run.succeeded' |
// 'run.blocked' | 'run.retrying', handler)`. Backend-neutral: the notifier reads runs through
// the executor's listRuns/getRun, the same reads the API and the panel use, so both backends
// deliver the same events. Delivery is ledgered durably in the engine's settings (the trigger
// store, present on both backends), one entry per run holding the last transition delivered
// (`<status>@<updatedAt>`): a transition is delivered once, also after a restart for the
// transitions that happened while no handler listened, counted from the first time any
// handler subscribed on this data dir (`notify.since`; older history is not replayed).
//
// Each tick reads the newest page (`pageSize`) of each watched status. A transition of a run
// older than that page when the tick runs is not seen: the bound is stated in docs/panel.md.
// A handler that throws does not get the event again (the ledger records the delivery after
// the handlers ran, so only a crash in between redelivers).
import type { ErrorInfo } from '../domain/errors.ts';
import type { RunStatus } from '../domain/run-status.ts';
import type { RunView } from '../domain/run-view.ts';
import type { DurableExecutor } from '../ports/executor.ts';
import type { Logger } from '../ports/logger.ts';

export const LIFECYCLE_EVENTS = ['run.failed', 'run.succeeded', 'run.blocked', 'run.retrying'] as const;
/** The run transitions engine.on can subscribe to. */
export type LifecycleEventType = (typeof LIFECYCLE_EVENTS)[number];

/** One run transition, as engine.on's handler gets it. */
export interface LifecycleEvent {
  type: LifecycleEventType;
  runId: string;
  workflow: string;
  status: RunStatus;
  /** When the run took this state (its updatedAt). */
  at: string;
  /** failed / blocked: the run's error; retrying: the failed attempt's error. */
  error?: ErrorInfo;
  /** retrying: the step and the attempt that failed; failed: the step that failed, if any. */
  step?: string;
  attempt?: number;
}

/** engine.on's handler; a handler that throws (or rejects) does not get the event again. */
export type LifecycleHandler = (event: LifecycleEvent) => void | Promise<void>;

const STATUS_OF: Record<LifecycleEventType, RunStatus> = {
  'run.failed': 'failed', 'run.succeeded': 'succeeded', 'run.blocked': 'blocked', 'run.retrying': 'retrying',
};
const SINCE = 'notify.since';
const ledgerKey = (runId: string) => `notify:${runId}`;

export interface NotifierOptions {
  intervalMs?: number;
  pageSize?: number;
  logger?: Logger;
}

export class Notifier {
  private readonly handlers = new Map<LifecycleEventType, Set<LifecycleHandler>>();
  private readonly delivered = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private started = false;
  private ticking: Promise<void> | undefined;
  private since: number | undefined;

  constructor(
    private readonly executor: Pick<DurableExecutor, 'listRuns' | 'getRun' | 'triggers'>,
    private readonly now: () => number,
    private readonly o: NotifierOptions = {},
  ) {}

  on(type: LifecycleEventType, handler: LifecycleHandler): () => void {
    const set = this.handlers.get(type) ?? new Set();
    set.add(handler);
    this.handlers.set(type, set);
    if (this.started) this.arm(0);
    return () => void set.delete(handler);
  }

  start(): void {
    this.started = true;
    if (this.handlers.size) this.arm(0);
  }

  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    // A handler that never returns must not hold the engine's stop: wait for it a moment only
    // (its delivery is then not ledgered and comes again after the next start).
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([this.ticking, new Promise((r) => (bound = setTimeout(r, 2_000)))]);
    clearTimeout(bound);
  }

  /** One pass now (tests and the panel's refresh call it; the timer calls it too). */
  async flush(): Promise<void> {
    if (this.ticking) await this.ticking;
    this.ticking = this.tick().finally(() => (this.ticking = undefined));
    await this.ticking;
  }

  private arm(ms: number): void {
    if (!this.started || this.timer || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = true;
      this.flush()
        .catch((err) => this.o.logger?.log('warn', `lifecycle notifier: ${(err as Error).message}`))
        .finally(() => {
          this.running = false;
          this.arm(this.o.intervalMs ?? 250);
        });
    }, ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    const types = [...this.handlers].filter(([, set]) => set.size > 0).map(([t]) => t);
    if (!types.length || !this.started) return;
    const t = this.executor.triggers;
    if (this.since === undefined) {
      const saved = await t.setting(SINCE);
      this.since = saved ? Number(saved) : this.now();
      if (!saved) await t.saveSettings([[SINCE, String(this.since)]]);
    }
    const due: { type: LifecycleEventType; run: RunView; token: string }[] = [];
    // The cache keeps only runs on this tick's pages: memory stays bounded by the pages, and
    // a run met again later has its ledger entry read once more.
    const seen = new Set<string>();
    for (const type of types) {
      const status = STATUS_OF[type];
      const page = await this.executor.listRuns({ status, limit: this.o.pageSize ?? 500 });
      for (const run of page.runs) {
        if (Date.parse(run.updatedAt) < this.since) continue;
        seen.add(run.runId);
        const token = `${status}@${run.updatedAt}`;
        let last = this.delivered.get(run.runId);
        if (last === undefined) {
          last = (await t.setting(ledgerKey(run.runId))) ?? '';
          this.delivered.set(run.runId, last);
        }
        if (last !== token) due.push({ type, run, token });
      }
    }
    for (const id of this.delivered.keys()) if (!seen.has(id)) this.delivered.delete(id);
    due.sort((a, b) => a.run.updatedAt.localeCompare(b.run.updatedAt));
    for (const d of due) {
      if (!this.started) return;
      const event = await this.event(d.type, d.run);
      for (const h of [...(this.handlers.get(d.type) ?? [])]) {
        try {
          await h(event);
        } catch (err) {
          this.o.logger?.log('warn', `lifecycle handler of ${d.type} for run ${d.run.runId} threw: ${(err as Error).message}`);
        }
      }
      this.delivered.set(d.run.runId, d.token);
      await t.saveSettings([[ledgerKey(d.run.runId), d.token]]);
    }
  }

  private async event(type: LifecycleEventType, listed: RunView): Promise<LifecycleEvent> {
    const e: LifecycleEvent = { type, runId: listed.runId, workflow: listed.workflow, status: listed.status, at: listed.updatedAt };
    if (type === 'run.succeeded') return e;
    const run = (await this.executor.getRun(listed.runId)) ?? listed;
    if (type === 'run.retrying') {
      const step = [...run.steps].reverse().find((s) => s.status === 'retrying');
      if (step) Object.assign(e, { step: step.name, attempt: step.attempts, ...(step.error ? { error: step.error } : {}) });
      return e;
    }
    if (run.error) e.error = run.error;
    const failed = run.steps.find((s) => s.status === 'failed' || s.status === 'timedout');
    if (type === 'run.failed' && failed) Object.assign(e, { step: failed.name, attempt: failed.attempts });
    return e;
  }
}
