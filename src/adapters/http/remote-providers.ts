// Capability providers that live in an attached app (compose/attach.ts), served through the
// engine a `tranquil serve` owns (docs/host.md, "Providers from an attached app").
// The app registers a provider over the control channel; here it becomes an ordinary
// provider of the service's engine whose handler queues each call for the app. The app
// long-polls for calls (`poll`), runs its handler in its own process and sends the result or
// error back (`answer`). So routing, affinity, parking and waking are the engine's own, and
// the provider's code runs in the app (a window, a signed-in account), never in the service.
// An app that stops polling for LEASE_MS is gone: its providers are withdrawn and the calls
// it had not answered fail with CapabilityUnavailableError, so their steps park (not an
// attempt, not a failure) until a provider appears again.
import { randomUUID } from '../../platform/random-uuid.ts';
import { CapabilityUnavailableError, type Attrs } from '../../domain/capability.ts';
import { fromErrorInfo, ValidationError, type ErrorInfo } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import type { CapabilitiesApi } from '../../runtime/capabilities.ts';
import { expireLeases, waitForWake } from './long-poll.ts';

/** An app that has not polled for this long is gone (it polls at least every POLL_MAX_MS). */
export const LEASE_MS = 15_000;
/** The longest one poll waits for a call. */
export const POLL_MAX_MS = 25_000;

export interface RemoteCall {
  callId: string;
  input: Json;
  runId: string;
  idempotencyKey: string;
  attempt: number;
  affinity: Attrs;
}

interface Pending {
  call: RemoteCall;
  settle(result: { ok: true; value: unknown } | { ok: false; error: Error }): void;
  delivered: boolean;
}

interface RemoteProvider {
  capability: string;
  attrs: Attrs;
  withdraw(): void;
  lastSeen: number;
  calls: Map<string, Pending>;
  /** Calls whose signal fired (timeout, cancel, engine stop) since the last poll. */
  aborted: string[];
  wake?: () => void;
}

export class RemoteProviders {
  private readonly providers = new Map<string, RemoteProvider>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly capabilities: CapabilitiesApi,
    private readonly leaseMs = LEASE_MS,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.max(50, Math.min(1_000, Math.floor(leaseMs / 4))));
    this.sweep.unref();
  }

  provide(capability: string, attrs: Attrs): { providerId: string } {
    const providerId = randomUUID();
    const p: RemoteProvider = { capability, attrs, withdraw: () => {}, lastSeen: Date.now(), calls: new Map(), aborted: [] };
    this.providers.set(providerId, p);
    p.withdraw = this.capabilities.provide(capability, attrs, (input, info) =>
      new Promise((resolve, reject) => {
        if (info.signal.aborted) return reject(info.signal.reason instanceof Error ? info.signal.reason : new Error('aborted'));
        const call: RemoteCall = { callId: randomUUID(), input, runId: info.runId, idempotencyKey: info.idempotencyKey, attempt: info.attempt, affinity: info.affinity };
        const pending: Pending = {
          call, delivered: false,
          settle: (r) => {
            p.calls.delete(call.callId);
            if (r.ok) resolve(r.value);
            else reject(r.error);
          },
        };
        p.calls.set(call.callId, pending);
        info.signal.addEventListener('abort', () => {
          if (!p.calls.has(call.callId)) return;
          if (pending.delivered) p.aborted.push(call.callId);
          pending.settle({ ok: false, error: info.signal.reason instanceof Error ? info.signal.reason : new Error('aborted') });
          p.wake?.();
        }, { once: true });
        p.wake?.();
      }));
    return { providerId };
  }

  /** The calls not yet handed to the app, waiting up to waitMs for one; renews the lease. */
  async poll(providerId: string, waitMs: number): Promise<{ calls: RemoteCall[]; aborted: string[] }> {
    const p = this.get(providerId);
    p.lastSeen = Date.now();
    const take = () => {
      const calls = [...p.calls.values()].filter((c) => !c.delivered);
      for (const c of calls) c.delivered = true;
      return { calls: calls.map((c) => c.call), aborted: p.aborted.splice(0) };
    };
    let out = take();
    if (out.calls.length === 0 && out.aborted.length === 0 && waitMs > 0) {
      await waitForWake(p, waitMs, POLL_MAX_MS);
      out = take();
    }
    p.lastSeen = Date.now();
    return out;
  }

  answer(providerId: string, callId: string, outcome: { result?: unknown; error?: ErrorInfo }): { accepted: boolean } {
    const p = this.get(providerId);
    p.lastSeen = Date.now();
    const pending = p.calls.get(callId);
    // Already aborted (timed out, cancelled): the answer is too late and is dropped.
    if (!pending) return { accepted: false };
    if (outcome.error) pending.settle({ ok: false, error: fromErrorInfo(outcome.error) });
    else pending.settle({ ok: true, value: outcome.result });
    return { accepted: true };
  }

  /** Later calls no longer reach it; calls the app already holds may still be answered. */
  withdraw(providerId: string): { withdrawn: boolean } {
    const p = this.providers.get(providerId);
    if (!p) return { withdrawn: false };
    p.withdraw();
    for (const c of [...p.calls.values()]) if (!c.delivered) c.settle({ ok: false, error: new CapabilityUnavailableError(p.capability, c.call.affinity) });
    // Kept until its lease runs out, so the answers of delivered calls still arrive.
    return { withdrawn: true };
  }

  /** Withdraws everything (the serve stops). */
  close(): void {
    clearInterval(this.sweep);
    for (const id of [...this.providers.keys()]) this.drop(id);
  }

  private get(providerId: string): RemoteProvider {
    const p = this.providers.get(providerId);
    if (!p) throw new ValidationError(`providerId: no provider '${providerId}' is registered with this serve (it restarted, or the lease ran out): provide it again`);
    return p;
  }

  private expire(): void {
    expireLeases(this.providers, this.leaseMs, (id) => this.drop(id));
  }

  /** The app is gone: withdraw first (so the executor's second look finds no provider), then
   *  fail what it never answered, which parks those steps. */
  private drop(id: string): void {
    const p = this.providers.get(id);
    if (!p) return;
    this.providers.delete(id);
    p.withdraw();
    for (const c of [...p.calls.values()]) c.settle({ ok: false, error: new CapabilityUnavailableError(p.capability, c.call.affinity) });
    p.wake?.();
  }
}

