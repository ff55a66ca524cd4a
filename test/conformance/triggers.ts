// Conformance scenarios for triggers (events, schedules, webhooks), called from
// runConformance(). Public engine API and fetch() over loopback only, so every backend
// runs them; long-duration schedule behaviour lives in test/sqlite/schedules.test.ts.
import { expect } from 'vitest';
import { z } from 'zod';
import { event, schedule, webhook, workflow, type WorkflowDefinition } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';

export interface ScenarioKit {
  test(name: string, fn: () => Promise<void>, timeout?: number): void;
  boot(workflows: WorkflowDefinition[], dataDir?: string, opts?: { liveAcrossReplicas?: boolean }): Promise<{ engine: Engine; dir: string }>;
  restart(engine: Engine, workflows: WorkflowDefinition[], dir: string, opts?: { liveAcrossReplicas?: boolean }): Promise<Engine>;
  until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<void>;
}

const signup = z.object({ email: z.string().email(), plan: z.enum(['free', 'pro']).default('free') });

function hookWorkflow(name = 'on-signup') {
  return workflow(name, (w) => {
    w.trigger(webhook({ path: 'signup', validate: signup }));
    w.run(async ({ input, step }) => step.do('welcome', () => `welcome ${input.email} (${input.plan})`));
  });
}

const post = (url: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(url, { method: 'POST', body, headers });

export function triggerScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('the same event id twice starts one run, also across a restart', async () => {
    const wf = workflow('on-order', (w) => {
      w.trigger(event('order.placed'));
      w.run(async ({ input, step }) => step.do('ship', () => `shipped ${input.orderId}`));
    });
    const { engine, dir } = await boot([wf]);
    const first = await engine.emit('order.placed', { orderId: 'o1' }, { id: 'order-o1' });
    await engine.result(first.runIds[0]!, { timeout: '20s' });
    const again = await restart(engine, [wf], dir);
    const second = await again.emit('order.placed', { orderId: 'o1' }, { id: 'order-o1' });
    expect(second).toEqual({ runIds: first.runIds, duplicate: true });
    expect(await again.runs.list({ workflow: 'on-order' })).toHaveLength(1);
  });

  test('an event with no subscriber is kept and visible, not dropped', async () => {
    const wf = workflow('listener', (w) => {
      w.trigger(event('known'));
      w.run(async () => 'ok');
    });
    const { engine } = await boot([wf]);
    const r = await engine.emit('nobody.listens', { n: 1 }, { id: 'lonely-1' });
    expect(r).toEqual({ runIds: [], duplicate: false });
    const unmatched = await engine.events.list({ unmatched: true });
    expect(unmatched.map((e) => [e.id, e.name, e.payload])).toEqual([['lonely-1', 'nobody.listens', { n: 1 }]]);
    await engine.emit('known', null, { id: 'k-1' });
    expect((await engine.events.list()).map((e) => e.id).sort()).toEqual(['k-1', 'lonely-1']);
  });

  test('an every-second schedule fires runs and records each slot', async () => {
    const wf = workflow('ticker', (w) => {
      w.trigger(schedule('* * * * * *'));
      w.run(async ({ input, step }) => step.do('tick', () => input.slot));
    });
    const { engine } = await boot([wf]);
    await until('two scheduled runs', async () => (await engine.runs.list({ workflow: 'ticker', status: 'succeeded' })).length >= 2);
    const slots = await engine.schedules.slots({ workflow: 'ticker', fate: 'fired' });
    expect(slots.length).toBeGreaterThanOrEqual(2);
    const runs = await engine.runs.list({ workflow: 'ticker' });
    for (const s of slots) expect(runs.map((r) => r.runId)).toContain(s.runId);
    expect(new Set(runs.map((r) => (r.input as { slot: string }).slot)).size).toBe(runs.length);
  });

  test('webhook: a valid delivery gets 202 with the run id; an Idempotency-Key redelivery returns the same run', async () => {
    const wf = hookWorkflow();
    const { engine } = await boot([wf]);
    const url = await engine.webhookUrl('on-signup');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/on-signup\/[A-Za-z0-9_-]{43}$/);
    const res = await post(url, JSON.stringify({ email: 'a@example.com' }));
    expect(res.status).toBe(202);
    const { runId, created } = (await res.json()) as { runId: string; created: boolean };
    expect(created).toBe(true);
    expect((await engine.result(runId, { timeout: '20s' })).output).toBe('welcome a@example.com (free)');

    const headers = { 'content-type': 'application/json', 'idempotency-key': 'delivery-7' };
    const a = (await (await post(url, JSON.stringify({ email: 'b@example.com' }), headers)).json()) as { runId: string; created: boolean };
    const b = await post(url, JSON.stringify({ email: 'b@example.com' }), headers);
    expect(b.status).toBe(202);
    expect(await b.json()).toEqual({ runId: a.runId, created: false });
    expect(await engine.runs.list({ workflow: 'on-signup' })).toHaveLength(2);
  });

  test('webhook: wrong or missing secret 404, oversized body 413, invalid body 400, and none creates a run', async () => {
    const wf = hookWorkflow();
    const { engine } = await boot([wf]);
    const url = await engine.webhookUrl('on-signup');
    const base = url.slice(0, url.lastIndexOf('/'));
    const body = JSON.stringify({ email: 'a@example.com' });
    expect((await post(`${base}/wrong-secret`, body)).status).toBe(404);
    expect((await post(`${base}/${'A'.repeat(43)}`, body)).status).toBe(404);
    expect((await post(base, body)).status).toBe(404);
    expect((await post(url.replace('/on-signup/', '/no-such-workflow/'), body)).status).toBe(404);

    const big = JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(1024 * 1024 + 10) });
    expect((await post(url, big)).status).toBe(413);

    const invalid = await post(url, JSON.stringify({ email: 'not-an-email' }));
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toMatch(/email/);
    const broken = await post(url, '{"email": ');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: string }).error).toMatch(/not valid JSON/);
    expect((await post(url, 'hello', { 'content-type': 'text/plain' })).status).toBe(415);

    expect(await engine.runs.list({ workflow: 'on-signup' })).toEqual([]);
  });

  test('webhook: form bodies are accepted; the path alias works; the URL is the same after a restart', async () => {
    const wf = hookWorkflow();
    const { engine, dir } = await boot([wf]);
    const url = await engine.webhookUrl('on-signup');
    const form = await post(url.replace('/on-signup/', '/signup/'), 'email=f%40example.com&plan=pro', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(202);
    const { runId } = (await form.json()) as { runId: string };
    expect((await engine.result(runId, { timeout: '20s' })).output).toBe('welcome f@example.com (pro)');
    const again = await restart(engine, [wf], dir);
    expect(await again.webhookUrl('on-signup')).toBe(url);
    expect((await post(url, JSON.stringify({ email: 'r@example.com' }))).status).toBe(202);
  });

  test('webhook mounted in the app: engine.handleWebhook answers as the listener (202, redelivery, 404, 413, 400, 415)', async () => {
    const wf = hookWorkflow();
    const { engine } = await boot([wf]);
    // Where an app's router would send it: any prefix, then /<workflow or path>/<secret>.
    const url = await engine.webhookUrl('on-signup', { base: 'http://app.local/api/hooks/' });
    expect(url).toMatch(/^http:\/\/app\.local\/api\/hooks\/on-signup\/[A-Za-z0-9_-]{43}$/);
    const secret = (u: string) => u.slice(u.lastIndexOf('/') + 1);
    expect(secret(url)).toBe(secret(await engine.webhookUrl('on-signup'))); // the listener's secret
    const deliver = (to: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
      engine.handleWebhook(new Request(to, { method: 'POST', body, headers }));
    const body = JSON.stringify({ email: 'm@example.com' });

    expect((await deliver(url.replace(/[^/]+$/, 'wrong-secret'), body)).status).toBe(404);
    expect((await deliver(url.replace('/on-signup/', '/no-such-workflow/'), body)).status).toBe(404);
    expect((await deliver('http://app.local/x', body)).status).toBe(404);
    expect((await engine.handleWebhook(new Request(url))).status).toBe(404); // a GET
    expect((await deliver(url, JSON.stringify({ email: 'm@example.com', pad: 'x'.repeat(1024 * 1024 + 10) }))).status).toBe(413);
    const invalid = await deliver(url, JSON.stringify({ email: 'nope' }));
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toMatch(/email/);
    expect((await deliver(url, 'hello', { 'content-type': 'text/plain' })).status).toBe(415);
    expect(await engine.runs.list({ workflow: 'on-signup' })).toEqual([]);

    const headers = { 'content-type': 'application/json', 'idempotency-key': 'delivery-9' };
    const first = await deliver(url.replace('/on-signup/', '/signup/'), body, headers);
    expect(first.status).toBe(202);
    const { runId, created } = (await first.json()) as { runId: string; created: boolean };
    expect(created).toBe(true);
    expect(await (await deliver(url, body, headers)).json()).toEqual({ runId, created: false });
    expect((await engine.result(runId, { timeout: '20s' })).output).toBe('welcome m@example.com (free)');
    await expect(engine.handleWebhook({} as Request)).rejects.toThrow(/handleWebhook: expected a fetch API Request/);
    const parsed = new Request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    await parsed.json(); // what an app's body parser running first does
    await expect(engine.handleWebhook(parsed)).rejects.toThrow(/body was already read: route the hook before any body parser/);
  });
}
