// Conformance scenarios for plain-data workflows (issue 14, docs/plain-workflows.md), called
// from runConformance(): the reference definition (its 48h wait shortened: a Restate backend
// cannot fake time) skips an activated user and nudges one that is not, once, with key
// nudge/<run id>; transient failures are retried with one key, declared and terminal ones
// are not; `wait: { event }` takes a signal; a run keeps the version it started with across
// a restart that registers the next version; `invoke:` runs a registered workflow as a child
// run and hands its output to later steps. The same on every backend.
import { expect } from 'vitest';
import { plainWorkflow, TerminalError, type Actions } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';
import { REFERENCE } from '../plain/reference.ts';

/** The reference with its 48h wait shortened to `wait` (everything else as written). */
const reference = (wait = '50ms') => REFERENCE.replace('wait: 48h', `wait: ${wait}`);

interface Sent { input: unknown; key: string; attempt: number }

function app(mail: (sent: Sent[]) => void = () => {}) {
  const sent: Sent[] = [];
  const users: Record<string, { activated: boolean; email: string }> = {
    u1: { activated: true, email: 'one@example.com' },
    u2: { activated: false, email: 'two@example.com' },
  };
  const actions: Actions = {
    'app.load_user': (input) => {
      const id = (input as { id: string }).id;
      if (!users[id]) throw new TerminalError(`no user ${id}`);
      return { id, ...users[id] };
    },
    'mail.send_template': (input, ctx) => {
      sent.push({ input, key: ctx.key, attempt: ctx.attempt });
      mail(sent);
      return { messageId: `m-${ctx.key}` };
    },
  };
  return { actions, sent };
}

export function plainScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('plain: the reference definition skips an activated user and nudges one that is not, once, with key nudge/<run id>', async () => {
    const { actions, sent } = app();
    const { engine } = await boot([plainWorkflow(reference(), { actions })]);
    const { runIds: [skipped] } = await engine.emit('user.signed_up', { user_id: 'u1' });
    const { runIds: [nudged] } = await engine.emit('user.signed_up', { user_id: 'u2' });
    const a = await engine.result(skipped!, { timeout: '30s' });
    const b = await engine.result(nudged!, { timeout: '30s' });
    expect(a.status).toBe('succeeded');
    expect(a.output).toEqual({ outcome: 'skipped', step: 'gate', condition: 'fetch.activated == false' });
    expect(a.steps.map((s) => [s.name, s.kind, s.status])).toEqual([['pause', 'sleep', 'succeeded'], ['fetch', 'do', 'succeeded'], ['gate', 'do', 'succeeded']]);
    expect((await engine.runs.explain(skipped!)).summary).toContain("with outcome skipped: condition 'fetch.activated == false' of step 'gate' was false");
    expect(b.status).toBe('succeeded');
    expect(b.output).toEqual({ outcome: 'completed' });
    expect(b.version).toMatch(/^v3-[0-9a-f]{12}$/);
    expect(sent).toEqual([{ input: { to: 'two@example.com', template: 'nudge' }, key: `nudge/${nudged}`, attempt: 1 }]);
  });

  test('plain: a transient mail failure twice, then success: three attempts, one key', async () => {
    const { actions, sent } = app((s) => {
      if (s.length <= 2) throw Object.assign(new Error('mail server timed out'), { status: 503 });
    });
    const text = reference().replace('base: 30s', 'base: 10ms');
    const { engine } = await boot([plainWorkflow(text, { actions })]);
    const { runId } = await engine.trigger('activation_nudge', { user_id: 'u2' });
    const run = await engine.result(runId, { timeout: '30s' });
    expect(run.status).toBe('succeeded');
    expect(sent.map((s) => [s.key, s.attempt])).toEqual([[`nudge/${runId}`, 1], [`nudge/${runId}`, 2], [`nudge/${runId}`, 3]]);
    expect(run.steps.find((s) => s.name === 'nudge')).toMatchObject({ status: 'succeeded', attempts: 3 });
  });

  test('plain: a declared non-retryable failure (HTTP 4xx) and a TerminalError each fail the run after one attempt', async () => {
    const { actions, sent } = app((s) => {
      throw s.length === 1 ? Object.assign(new Error('mailbox does not exist'), { name: 'HttpError', status: 404 }) : new TerminalError('blocked address');
    });
    const text = reference().replace('base: 30s, jitter: true', "base: 10ms, jitter: true, non_retryable: ['4xx']");
    const { engine } = await boot([plainWorkflow(text, { actions })]);
    const { runId: first } = await engine.trigger('activation_nudge', { user_id: 'u2' });
    const a = await engine.result(first, { timeout: '30s' });
    expect(a.status).toBe('failed');
    expect(a.error).toEqual({ name: 'TerminalError', message: 'HttpError: mailbox does not exist (declared non-retryable)' });
    const { runId: second } = await engine.trigger('activation_nudge', { user_id: 'u2' });
    const b = await engine.result(second, { timeout: '30s' });
    expect(b.status).toBe('failed');
    expect(b.error).toEqual({ name: 'TerminalError', message: 'blocked address' });
    expect(sent.map((s) => s.attempt)).toEqual([1, 1]);
    expect(b.steps.find((s) => s.name === 'nudge')).toMatchObject({ status: 'failed', attempts: 1 });
  });

  test('plain: a run waiting on v1 keeps v1 after a restart registers v2; new runs start on v2', async () => {
    const def = (version: number, template: string) => pinnedYaml('pinned', version, template);
    const { actions, sent } = app();
    const { engine, dir } = await boot([plainWorkflow(def(1, 'first'), { actions })]);
    const { runId } = await engine.trigger('pinned', null);
    await until('v1 run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    const next = await restart(engine, [plainWorkflow(def(2, 'second'), { actions })], dir);
    await next.signal(runId, 'go', { to: 'a@example.com' });
    const old = await next.result(runId, { timeout: '30s' });
    expect(old.status).toBe('succeeded');
    expect(old.version).toMatch(/^v1-/);
    const { runId: fresh } = await next.trigger('pinned', null);
    await next.signal(fresh, 'go', { to: 'b@example.com' });
    const run = await next.result(fresh, { timeout: '30s' });
    expect(run.version).toMatch(/^v2-/);
    expect(sent.map((s) => s.input)).toEqual([{ to: 'a@example.com', template: 'first' }, { to: 'b@example.com', template: 'second' }]);
  }, 60_000);

  test('plain: a fork of a v1 run, after a restart registers v2, runs the v1 code from the fork point (the version is the original one)', async () => {
    const def = (version: number, template: string) => pinnedYaml('pinned-fork', version, template);
    const { actions, sent } = app();
    const { engine, dir } = await boot([plainWorkflow(def(1, 'first'), { actions })]);
    const { runId } = await engine.trigger('pinned-fork', null);
    await until('v1 run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.signal(runId, 'go', { to: 'a@example.com' });
    const old = await engine.result(runId, { timeout: '30s' });
    expect(old.status).toBe('succeeded');
    const next = await restart(engine, [plainWorkflow(def(2, 'second'), { actions })], dir);
    const send = old.steps.find((st) => st.seq > 0)!;
    const fork = await next.runs.fork(runId, { from: send.seq });
    const forked = await next.result(fork.runId, { timeout: '30s' });
    expect(forked.status).toBe('succeeded');
    expect(forked.version).toBe(old.version);
    // The wait is reused (no signal sent to the fork); the action ran again with v1's template.
    expect(sent.map((x) => x.input)).toEqual([{ to: 'a@example.com', template: 'first' }, { to: 'a@example.com', template: 'first' }]);
  }, 60_000);

  test('plain: invoke runs a registered workflow as a child; its output feeds later steps; a failed child fails the run; an unknown one is refused at build', async () => {
    const def = `workflow: checkout
version: 1
trigger: { manual: true }
steps:
  - id: pay
    invoke: plain-pay
    input: { amount: "{{ trigger.amount }}" }
    timeout: 30s
  - id: send
    action: mail.send_template
    input: { to: a@example.com, template: "receipt {{ pay.receipt }}" }
`;
    const pay = workflow('plain-pay', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const { amount } = input as { amount: number };
        return step.do('charge', () => {
          if (amount < 0) throw new TerminalError(`refund ${amount} refused`);
          return { receipt: `r-${amount}` };
        });
      });
    });
    const { actions, sent } = app();
    await expect(boot([plainWorkflow(def.replace('plain-pay', 'plain-nope'), { actions }), pay])).rejects.toThrow(
      "steps[0].invoke: workflow 'plain-nope' is not registered with this engine (registered: 'checkout', 'plain-pay')",
    );
    const { engine } = await boot([plainWorkflow(def, { actions }), pay]);
    const { runId } = await engine.trigger('checkout', { amount: 7 });
    const done = await engine.result(runId, { timeout: '30s' });
    expect(done).toMatchObject({ status: 'succeeded', output: { outcome: 'completed' } });
    expect(sent.map((x) => x.input)).toEqual([{ to: 'a@example.com', template: 'receipt r-7' }]);
    const children = await engine.runs.list({ parent: runId });
    expect(children.map((c) => [c.runId, c.workflow, c.status])).toEqual([[`${runId}:pay`, 'plain-pay', 'succeeded']]);
    expect((await engine.runs.get(`${runId}:pay`)).output).toEqual({ receipt: 'r-7' });

    const { runId: bad } = await engine.trigger('checkout', { amount: -1 });
    const failed = await engine.result(bad, { timeout: '30s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ name: 'ChildRunError' });
    expect(failed.error?.message).toContain('refund -1 refused');
    expect(sent).toHaveLength(1);
  }, 60_000);

  test('plain: start runs children side by side and result awaits each later; result names only an earlier start step', async () => {
    const def = `workflow: nightly
version: 1
trigger: { manual: true }
steps:
  - id: a
    start: plain-tenant
    input: { tenant: a }
  - id: b
    start: plain-tenant
    input: { tenant: b }
  - id: ra
    result: a
    timeout: 30s
  - id: rb
    result: b
  - id: send
    action: mail.send_template
    input: { to: ops@example.com, template: "{{ a }} {{ ra.report }} {{ rb.report }}" }
`;
    const gate: { open?: () => void } = {};
    const opened = new Promise<void>((r) => (gate.open = r));
    const running = new Set<string>();
    let together = false;
    const tenant = workflow('plain-tenant', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const { tenant: t } = input as { tenant: string };
        // Both children run before either ends: the run awaited neither at its start.
        return step.do('report', async () => {
          running.add(t);
          if (running.size === 2) (together = true), gate.open!();
          await Promise.race([opened, new Promise((r) => setTimeout(r, 10_000))]);
          return { report: `report-${t}` };
        });
      });
    });
    const { actions, sent } = app();
    expect(() => plainWorkflow(def.replace('result: a', 'result: send'), { actions })).toThrow(
      "steps[2].result: 'send' is not an earlier start step (earlier start steps: 'a', 'b')",
    );
    await expect(boot([plainWorkflow(def.replace('start: plain-tenant', 'start: plain-nope'), { actions }), tenant])).rejects.toThrow(
      "steps[0].start: workflow 'plain-nope' is not registered with this engine",
    );
    const { engine } = await boot([plainWorkflow(def, { actions }), tenant]);
    const { runId } = await engine.trigger('nightly', {});
    const done = await engine.result(runId, { timeout: '30s' });
    expect(done).toMatchObject({ status: 'succeeded', output: { outcome: 'completed' } });
    expect(together).toBe(true);
    expect(sent.map((x) => x.input)).toEqual([{ to: 'ops@example.com', template: `${runId}:a report-a report-b` }]);
    const children = await engine.runs.list({ parent: runId });
    expect(children.map((c) => [c.runId, c.status]).sort()).toEqual([[`${runId}:a`, 'succeeded'], [`${runId}:b`, 'succeeded']]);
  }, 60_000);

  test("plain: invoke's onParentCancel: a cancel of the run cancels a child by default and leaves an abandoned one running", async () => {
    const def = (policy: string) => `workflow: plain-parent-${policy}
version: 1
trigger: { manual: true }
steps:
  - id: kid
    invoke: plain-waiter
    onParentCancel: ${policy}
`;
    const waiter = workflow('plain-waiter', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent<string>('go', { timeout: '1h' }));
    });
    const { engine } = await boot([plainWorkflow(def('cancel')), plainWorkflow(def('abandon')), waiter]);
    const started = await Promise.all(['cancel', 'abandon'].map((p) => engine.trigger(`plain-parent-${p}`, null)));
    const [kept, left] = started.map((s) => `${s.runId}:kid`) as [string, string];
    await until('both children waiting', async () => (await Promise.all([kept, left].map((id) => engine.runs.get(id).catch(() => undefined)))).every((r) => r?.status === 'waiting'));
    for (const s of started) await engine.runs.cancel(s.runId);
    for (const s of started) expect((await engine.result(s.runId, { timeout: '30s' })).status).toBe('cancelled');
    expect((await engine.result(kept, { timeout: '30s' })).status).toBe('cancelled');
    expect((await engine.runs.get(left)).status).toBe('waiting');
    await engine.signal(left, 'go', 'still here');
    expect(await engine.result(left, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'still here' });
  }, 60_000);

  test('plain: queue: an action holds a slot of its queue while it runs: never more than concurrency at once, per key; runs.singleton skips a run of an unfinished key', async () => {
    const def = `workflow: plain-llm
version: 1
trigger: { manual: true }
queues:
  llm: { concurrency: 2, key: { concurrency: 1 } }
runs:
  singleton: { key: "{{ trigger.job }}", mode: skip }
steps:
  - id: call
    action: llm.call
    input: { user: "{{ trigger.user }}" }
    queue: { name: llm, key: "{{ trigger.user }}" }
`;
    // Counted by the action's bodies themselves, from their own starts and ends.
    const running = { all: 0, max: 0, key: {} as Record<string, number>, keyMax: {} as Record<string, number> };
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const actions: Actions = {
      'llm.call': async (input) => {
        const k = (input as { user: string }).user;
        running.max = Math.max(running.max, ++running.all);
        running.keyMax[k] = Math.max(running.keyMax[k] ?? 0, (running.key[k] = (running.key[k] ?? 0) + 1));
        await gate;
        await new Promise((r) => setTimeout(r, 5));
        running.all--;
        running.key[k]!--;
        return k;
      },
    };
    const { engine } = await boot([plainWorkflow(def, { actions })]);
    const runs = [];
    for (let i = 0; i < 6; i++) runs.push((await engine.trigger('plain-llm', { user: `u${i % 3}`, job: `j${i}` })).runId);
    await until('the slots to fill and the rest to wait', async () => running.all >= 2 && (await engine.runs.list({ queue: 'llm' })).length === 6 - running.all);
    // j0 is unfinished: a second run of it is recorded and skipped, none of its code run.
    const dup = await engine.result((await engine.trigger('plain-llm', { user: 'u9', job: 'j0' })).runId, { timeout: '30s' });
    expect(dup.status).toBe('succeeded');
    expect(dup.output).toMatchObject({ outcome: 'skipped' });
    expect(JSON.stringify(dup.output)).toContain("runs.singleton (mode skip)");
    open();
    for (const id of runs) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
    expect(running.max).toBe(2);
    expect(running.keyMax).toEqual({ u0: 1, u1: 1, u2: 1 });
  }, 60_000);

  test('plain: debounce: a burst of events per key becomes one run with the last payload; a bad debounce is refused at load in one line', async () => {
    const def = `workflow: plain-reindex
version: 1
trigger: { event: doc.edited }
debounce: { period: 800ms, key: "{{ trigger.user }}", max_wait: 1m }
steps:
  - id: index
    action: search.index
    input: { user: "{{ trigger.user }}", n: "{{ trigger.n }}" }
`;
    const indexed: unknown[] = [];
    const actions: Actions = { 'search.index': (input) => (indexed.push(input), input) };
    const { engine } = await boot([plainWorkflow(def, { actions })]);
    for (let n = 0; n < 10; n++) await engine.emit('doc.edited', { user: n % 2 ? 'b' : 'a', n }, { id: `pe-${n}` });
    await until('two runs ended', async () => (await engine.runs.list({ workflow: 'plain-reindex' })).filter((r) => r.status === 'succeeded').length === 2, 45_000);
    expect(indexed.map((i) => JSON.stringify(i)).sort()).toEqual([JSON.stringify({ user: 'a', n: 8 }), JSON.stringify({ user: 'b', n: 9 })]);
    expect(() => plainWorkflow(def.replace('max_wait: 1m', 'max_wait: 100ms'), { actions })).toThrow(/debounce\.max_wait: must be at least the period \(800ms\), got 100ms$/m);
    expect(() => plainWorkflow(def.replace('period: 800ms', 'period: 0s'), { actions })).toThrow(/debounce\.period: must be longer than 0/);
    expect(() => plainWorkflow(def.replace('{{ trigger.user }}"', '{{ steps.index.output }}"'), { actions })).toThrow(/debounce\.key: .*sees only trigger/);
  }, 60_000);
}

/** A YAML workflow that waits for event 'go' then mails `template`: what a version pins. */
function pinnedYaml(name: string, version: number, template: string): string {
  return `workflow: ${name}
version: ${version}
trigger: { manual: true }
steps:
  - id: go
    wait: { event: go }
  - id: send
    action: mail.send_template
    input: { to: "{{ go.to }}", template: ${template} }
`;
}
