// The scenario every framework recipe (Express, Fastify, Next.js) passes: the payment webhook,
// mounted in the app's own router at /hooks/<workflow>/<secret> through engine.handleWebhook
// (the engine opens no port of its own), refuses a wrong secret, an oversized body (the
// engine's limit, not the framework's) and a bad body, starts one run per delivery
// (Idempotency-Key), and the run finishes; the app's manual route
// starts one run per order; the status route reports both runs finished with their output and
// a 404 for an unknown run; each warehouse call happened once per order.
import { expect } from 'vitest';
import type { Engine } from '@tranquil/engine';
import type { Warehouse } from '../../examples/recipes/fulfil.ts';

/** One webhook delivery to the app's hook route (a URL under its base). */
export type Deliver = (url: string, body: string, headers: Record<string, string>) => Promise<Response>;

/** A delivery over real HTTP to a listening app. */
export const httpDeliver: Deliver = (url, body, headers) => fetch(url, { method: 'POST', headers, body });

/** One request to the app (the host's own routes), answered as status + parsed JSON. */
export type Call = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<{ status: number; json: any }>;

export function recordingWarehouse(): { warehouse: Warehouse; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    warehouse: {
      invoice: async (orderId, amount) => (calls.push(`invoice ${orderId} ${amount}`), `inv-${orderId}`),
      ship: async (orderId) => (calls.push(`ship ${orderId}`), `trk-${orderId}`),
    },
  };
}

export interface HostRoutes {
  /** The app's base URL, where it routes /hooks/<workflow>/<secret> to engine.handleWebhook. */
  base: string;
  deliver: Deliver;
  /** The recipe's own routes (Next.js puts them under /api). */
  orders?: string;
  runs?: string;
}

/** Runs the scenario. */
export async function hostScenario(engine: Engine, call: Call, calls: () => string[], routes: HostRoutes): Promise<void> {
  const paths = { orders: routes.orders ?? '/orders', runs: routes.runs ?? '/runs' };
  const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    routes.deliver(url, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
  expect(engine.webhookAddress).toBeUndefined(); // webhook.listen: false, the app's port only
  const hook = await engine.webhookUrl('fulfil', { base: `${routes.base}/hooks` });
  expect(hook.startsWith(`${routes.base}/hooks/fulfil/`)).toBe(true);
  expect(hook).toMatch(/\/hooks\/fulfil\/[\w-]{43}$/);

  // Refused before any run exists: a wrong secret (404), a body over the engine's 1 MiB limit
  // (413, the engine's answer: the framework's body parser never saw it), and a body the input
  // schema refuses (400, naming the field).
  expect((await postJson(hook.replace(/[\w-]+$/, 'not-the-secret'), { orderId: 'a1', amount: 1 })).status).toBe(404);
  const big = await postJson(hook, { orderId: 'a1', amount: 1, pad: 'x'.repeat(1024 * 1024) });
  expect(big.status).toBe(413);
  expect(((await big.json()) as { error: string }).error).toMatch(/body larger than 1048576 bytes/);
  const bad = await postJson(hook, { orderId: 'a1' });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toMatch(/amount/);
  const first = await postJson(hook, { orderId: 'a1', amount: 12.5 }, { 'idempotency-key': 'evt_1' });
  expect(first.status).toBe(202);
  const { runId, created } = (await first.json()) as { runId: string; created: boolean };
  expect(created).toBe(true);
  const again = await postJson(hook, { orderId: 'a1', amount: 12.5 }, { 'idempotency-key': 'evt_1' });
  expect(await again.json()).toEqual({ runId, created: false });
  expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
  expect(await call('GET', `${paths.runs}/${runId}`)).toMatchObject({
    status: 200,
    json: { runId, status: 'succeeded', output: { invoice: 'inv-a1', tracking: 'trk-a1' } },
  });

  // The trigger's path alias: /hooks/payments/<secret> is the same hook.
  const alias = await postJson(hook.replace('/hooks/fulfil/', '/hooks/payments/'), { orderId: 'a1', amount: 12.5 }, { 'idempotency-key': 'evt_1' });
  expect(await alias.json()).toEqual({ runId, created: false });

  // The manual route: one run per order however often it is posted; a bad field is a 400.
  expect(await call('POST', paths.orders, { orderId: 'b2', amount: 3 })).toEqual({ status: 201, json: { runId: 'fulfil-b2', created: true } });
  expect(await call('POST', paths.orders, { orderId: 'b2', amount: 3 })).toEqual({ status: 200, json: { runId: 'fulfil-b2', created: false } });
  const refused = await call('POST', paths.orders, { orderId: 'b 3', amount: -1 });
  expect(refused.status).toBe(400);
  expect(refused.json.error).toMatch(/orderId/);
  expect(refused.json.error).toMatch(/amount/);
  await engine.result('fulfil-b2', { timeout: '20s' });
  const status = await call('GET', `${paths.runs}/fulfil-b2`);
  expect(status).toMatchObject({ status: 200, json: { status: 'succeeded', output: { invoice: 'inv-b2', tracking: 'trk-b2' } } });
  expect(status.json.why).toMatch(/succeeded/);

  expect(await call('GET', `${paths.runs}/no-such-run`)).toEqual({ status: 404, json: { error: "unknown run 'no-such-run'" } });
  expect(calls()).toEqual(['invoice a1 12.5', 'ship a1', 'invoice b2 3', 'ship b2']);
}

/** A Call against a listening app's base URL. */
export const httpCall = (base: string): Call => async (method, path, body) => {
  const res = await fetch(`${base}${path}`, body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
};
