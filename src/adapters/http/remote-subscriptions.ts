// Step-event subscriptions of an attached app (compose/attach.ts; docs/live-output.md,
// "Per-step events"), served through the engine a `tranquil serve` owns. The app subscribes
// over the control channel; here that becomes an ordinary engine.runs.subscribe whose handler
// queues each event for the app, which long-polls for them (`events`) and hands them to its
// own handler in order. Step events are in-process (the executing engine emits them), so this
// is how another process follows them. An app that stops polling for its lease is gone: its
// subscription ends. A queue the app does not drain keeps its newest MAX_QUEUED events and
// counts what it dropped (`missed`), so a stalled app never grows the service's memory.
import { randomUUID } from '../../platform/random-uuid.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { LiveOutputApi } from '../../runtime/live-output.ts';
import type { StepEvent } from '../../runtime/step-events.ts';
import { LEASE_MS, POLL_MAX_MS } from './remote-providers.ts';
import { expireLeases, waitForWake } from './long-poll.ts';

/** Events kept per subscription between two polls; older ones are dropped (and counted). */
export const MAX_QUEUED = 10_000;

interface Subscription {
  off(): void;
  queue: StepEvent[];
  missed: number;
  lastSeen: number;
  wake?: () => void;
}

export class RemoteSubscriptions {
  private readonly subs = new Map<string, Subscription>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly runs: Pick<LiveOutputApi, 'subscribe'>,
    private readonly leaseMs = LEASE_MS,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.max(50, Math.min(1_000, Math.floor(leaseMs / 4))));
    this.sweep.unref();
  }

  /** Follows run `runId`'s step events, or every run's; throws for a bad run id. */
  subscribe(runId: string | undefined): { subscriptionId: string } {
    const subscriptionId = randomUUID();
    const s: Subscription = { off: () => {}, queue: [], missed: 0, lastSeen: Date.now() };
    s.off = this.runs.subscribe((e) => {
      s.queue.push(e);
      if (s.queue.length > MAX_QUEUED) {
        s.queue.shift();
        s.missed++;
      }
      s.wake?.();
    }, runId === undefined ? {} : { runId });
    this.subs.set(subscriptionId, s);
    return { subscriptionId };
  }

  /** The events queued since the last poll, in order, waiting up to waitMs for one; renews
   *  the lease. `missed`: how many were dropped since the last poll (the queue was full). */
  async events(subscriptionId: string, waitMs: number): Promise<{ events: StepEvent[]; missed: number }> {
    const s = this.get(subscriptionId);
    s.lastSeen = Date.now();
    if (s.queue.length === 0 && waitMs > 0) {
      await waitForWake(s, waitMs, POLL_MAX_MS);
    }
    s.lastSeen = Date.now();
    const out = { events: s.queue.splice(0), missed: s.missed };
    s.missed = 0;
    return out;
  }

  unsubscribe(subscriptionId: string): { unsubscribed: boolean } {
    if (!this.subs.has(subscriptionId)) return { unsubscribed: false };
    this.drop(subscriptionId);
    return { unsubscribed: true };
  }

  /** Ends every subscription (the serve stops). */
  close(): void {
    clearInterval(this.sweep);
    for (const id of [...this.subs.keys()]) this.drop(id);
  }

  private get(subscriptionId: string): Subscription {
    const s = this.subs.get(subscriptionId);
    if (!s) throw new ValidationError(`subscriptionId: no subscription '${subscriptionId}' with this serve (it restarted, or the lease ran out): subscribe again`);
    return s;
  }

  private expire(): void {
    expireLeases(this.subs, this.leaseMs, (id) => this.drop(id));
  }

  private drop(id: string): void {
    const s = this.subs.get(id);
    if (!s) return;
    this.subs.delete(id);
    s.off();
    s.wake?.();
  }
}
