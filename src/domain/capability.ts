// Capabilities (issue 16): work only the embedding host can do (a browser window with the
// user's session, a signed-in account, a device). A workflow asks with `step.use(name, input,
// { affinity })`; the host registers providers with attributes. This file owns the pure
// rules: what an affinity and a provider's attributes are, containment (the only routing
// rule), and the error a capability step parks on.
import * as z from 'zod';
import type { Json } from './json.ts';
import { once } from './once.ts';

/** Attribute values are plain scalars: compared with ===, stored as JSON. */
export type AttrValue = string | number | boolean;
/** A provider's attributes, or the affinity a step.use call asks for: names to scalars. */
export type Attrs = Readonly<Record<string, AttrValue>>;

export const CAPABILITY_NAME = /^[A-Za-z0-9_.:\-]+$/;
export const capabilityNameSchema = once(() => z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').regex(CAPABILITY_NAME, 'letters, digits and _ . : - only'));
export const attrsSchema = once(() => z.record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number().finite(), z.boolean()]))
  .refine((r) => Object.keys(r).length <= 32, 'at most 32 attributes'));

/** Containment: a provider may serve a request only if it has every attribute the request's
 *  affinity names, with the same value. Never relaxed to make progress. */
export function contains(attrs: Attrs, affinity: Attrs): boolean {
  for (const [k, v] of Object.entries(affinity)) if (!Object.hasOwn(attrs, k) || attrs[k] !== v) return false;
  return true;
}

/** `{ partition: 'work' }` -> `partition=work`; `{}` -> `any provider`. */
export function describeAffinity(affinity: Attrs): string {
  const keys = Object.keys(affinity).sort();
  return keys.length === 0 ? 'any provider' : keys.map((k) => `${k}=${String(affinity[k])}`).join(', ');
}

/** One call of a capability, as the session hands it to the host (in-process, over
 *  Restate's handler, or from a Deno child through the engine). */
export interface CapabilityRequest {
  runId: string;
  capability: string;
  affinity: Attrs;
  input: Json;
  idempotencyKey: string;
  attempt: number;
}

export const CAPABILITY_UNAVAILABLE = 'CapabilityUnavailableError';

/** No provider with matching attributes is registered: the step parks (not a failure, not
 *  an attempt). Its fields say what the run waits for; `why` reads them. */
export class CapabilityUnavailableError extends Error {
  readonly capability: string;
  readonly affinity: Attrs;
  constructor(capability: string, affinity: Attrs) {
    super(`no provider of capability '${capability}' matching ${describeAffinity(affinity)} is registered`);
    this.name = CAPABILITY_UNAVAILABLE;
    this.capability = capability;
    this.affinity = affinity;
  }
}

/** What a parked step's recorded error says it waits for (undefined: not a park). */
export function parkOf(error: { name: string; fields?: { [k: string]: Json } } | undefined): { capability: string; affinity: Attrs } | undefined {
  if (error?.name !== CAPABILITY_UNAVAILABLE) return undefined;
  const f = error.fields ?? {};
  const capability = typeof f.capability === 'string' ? f.capability : undefined;
  const parsed = attrsSchema().safeParse(f.affinity ?? {});
  if (!capability || !parsed.success) return undefined;
  return { capability, affinity: parsed.data };
}
