// The host's capability providers (issue 16, docs/host.md): what `engine.capabilities`
// exposes and what the step logs call for step.use. Providers live in the host process only
// (a window, a signed-in account, a device): a run anywhere (in-process, in Restate's
// handler, in a Deno child through the engine) reaches them through this registry.
// Routing is containment only (domain/capability.ts): a call goes to the oldest registered
// provider whose attributes contain the call's affinity, never to another one.
import { CapabilityUnavailableError, attrsSchema, capabilityNameSchema, contains, type Attrs, type CapabilityRequest } from '../domain/capability.ts';
import { ValidationError } from '../domain/errors.ts';
import { parseOrThrow } from '../domain/validate.ts';
import type { Json } from '../domain/json.ts';

/** What a capability provider's handler gets besides the input (engine.capabilities.provide). */
export interface ProviderCallInfo {
  runId: string;
  /** `<runId>/<stepName>`: the same on every attempt and replay of the step; pass it on. */
  idempotencyKey: string;
  attempt: number;
  /** The affinity the workflow asked for. */
  affinity: Attrs;
  /** Aborted when the attempt times out, the run is cancelled or the engine stops. */
  signal: AbortSignal;
}

/** Returns the step's result (JSON; undefined allowed). A thrown TerminalError is not retried. */
export type CapabilityHandler = (input: Json, info: ProviderCallInfo) => unknown;

interface Provider {
  capability: string;
  attrs: Attrs;
  handler: CapabilityHandler;
}

export class CapabilityRegistry {
  private readonly providers = new Map<string, Provider[]>();
  private readonly listeners = new Set<(capability: string, attrs: Attrs) => void>();

  /** Registers a provider; the returned function withdraws it (idempotent). Runs parked on a
   *  matching request are told through onProvide. */
  provide(capability: string, attrs: Attrs, handler: CapabilityHandler): () => void {
    const p: Provider = { capability, attrs: { ...attrs }, handler };
    const list = this.providers.get(capability) ?? [];
    list.push(p);
    this.providers.set(capability, list);
    for (const l of this.listeners) l(capability, p.attrs);
    return () => {
      const now = this.providers.get(capability);
      const i = now?.indexOf(p) ?? -1;
      if (i < 0) return;
      now!.splice(i, 1);
      if (now!.length === 0) this.providers.delete(capability);
    };
  }

  onProvide(listener: (capability: string, attrs: Attrs) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  eligible(capability: string, affinity: Attrs): boolean {
    return this.find(capability, affinity) !== undefined;
  }

  list(): { capability: string; attrs: Attrs }[] {
    return [...this.providers.values()].flat().map((p) => ({ capability: p.capability, attrs: { ...p.attrs } }));
  }

  /** One attempt of a capability step: the provider's result, or its error;
   *  CapabilityUnavailableError when none matches (the step parks). */
  async call(req: CapabilityRequest, signal: AbortSignal): Promise<Json | undefined> {
    const p = this.find(req.capability, req.affinity);
    if (!p) throw new CapabilityUnavailableError(req.capability, req.affinity);
    const info: ProviderCallInfo = { runId: req.runId, idempotencyKey: req.idempotencyKey, attempt: req.attempt, affinity: { ...req.affinity }, signal };
    return (await p.handler(req.input, info)) as Json | undefined;
  }

  private find(capability: string, affinity: Attrs): Provider | undefined {
    return this.providers.get(capability)?.find((p) => contains(p.attrs, affinity));
  }
}

/** `engine.capabilities` (docs/host.md). */
export interface CapabilitiesApi {
  /** Registers a provider of `capability` with attributes `attrs` (e.g. `{ partition: 'work' }`);
   *  runs parked on a request it matches resume at once. Returns `withdraw()` (a window
   *  closed): later requests no longer reach it; a call already under way finishes. */
  provide(capability: string, attrs: Attrs, handler: CapabilityHandler): () => void;
  /** The providers registered now. */
  list(): { capability: string; attrs: Attrs }[];
}

/** The API over the registry; `wake` resumes the runs parked on a capability whose affinity
 *  `attrs` contains (the executor's wakeParked). */
export function capabilitiesApi(registry: CapabilityRegistry, wake: (capability: string, attrs: Attrs) => Promise<void>): CapabilitiesApi {
  return {
    provide(capability, attrs, handler) {
      const name = parseOrThrow(capabilityNameSchema(), capability, 'capability name');
      const a = parseOrThrow(attrsSchema(), attrs ?? {}, `attributes of capability '${name}'`);
      if (typeof handler !== 'function') throw new ValidationError(`capabilities.provide('${name}'): handler must be a function`);
      const withdraw = registry.provide(name, a, handler);
      // Never throws into the host: a wake that fails is retried by the next provide or restart.
      wake(name, a).catch((err) => console.error(`tranquil: waking runs parked on '${name}' failed: ${(err as Error)?.message ?? err}`));
      return withdraw;
    },
    list: () => registry.list(),
  };
}
