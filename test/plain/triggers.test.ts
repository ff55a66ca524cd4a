// A plain workflow's object-form triggers go through the same trigger machinery as code
// workflows: a schedule fires on the manual clock, a webhook POST starts a run with the body
// as `trigger`, `wait: { event }` takes a signal, and a run can read all of it in templates.
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { plainWorkflow, type Actions } from '@tranquil/engine';

const calls: { step: string; input: unknown }[] = [];
const actions: Actions = { 'log.write': (input, ctx) => (calls.push({ step: ctx.step, input }), { logged: true }) };

describe('plain workflows: schedule, webhook and wait-for-event', () => {
  const open: TestEngine[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
    calls.length = 0;
  });

  it('a schedule trigger fires at its slot', async () => {
    const t = await createTestEngine({
      startAt: '2026-03-28T08:00:00Z',
      actions,
      workflows: [plainWorkflow(`workflow: daily
version: 1
trigger: { schedule: "0 9 * * *", timezone: UTC, catch_up: none }
steps:
  - id: note
    action: log.write
    input: { at: "{{ instance.workflow }}" }
`)],
    });
    open.push(t);
    expect(await t.engine.runs.list()).toEqual([]);
    await t.advance('1h');
    const runs = await t.engine.runs.list({ workflow: 'daily' });
    expect(runs).toHaveLength(1);
    expect((await t.engine.result(runs[0]!.runId)).status).toBe('succeeded');
    expect(calls).toEqual([{ step: 'note', input: { at: 'daily' } }]);
  });

  it('a webhook starts a run with the body as trigger; a wait for an event takes the signal', async () => {
    const t = await createTestEngine({
      actions,
      webhook: { port: 0 },
      workflows: [plainWorkflow(`workflow: hooked
version: 1
trigger: [{ webhook: inbound }, { manual: true }]
steps:
  - id: reply
    wait: { event: reply, timeout: 1h }
  - id: note
    action: log.write
    input: "{{ trigger.user }} said {{ reply.text }} ({{ size(reply.text) }} chars)"
`)],
    });
    open.push(t);
    const res = await fetch(await t.engine.webhookUrl('hooked'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'ada' }) });
    expect(res.status).toBe(202);
    await t.idle();
    const [run] = await t.engine.runs.list({ workflow: 'hooked' });
    expect(run!.status).toBe('waiting');
    await t.engine.signal(run!.runId, 'reply', { text: 'hello' });
    await t.idle();
    const done = await t.engine.result(run!.runId);
    expect(done.status).toBe('succeeded');
    expect(calls).toEqual([{ step: 'note', input: 'ada said hello (5 chars)' }]);
  });

  it('a wait for an event that times out fails the run with TimeoutError', async () => {
    const t = await createTestEngine({
      actions,
      workflows: [plainWorkflow(`workflow: impatient
version: 1
trigger: { manual: true }
steps:
  - id: reply
    wait: { event: reply, timeout: 1h }
`)],
    });
    open.push(t);
    const { runId } = await t.engine.trigger('impatient', null);
    await t.advance('2h');
    const run = await t.engine.result(runId);
    expect(run.status).toBe('failed');
    expect(run.error?.name).toBe('TimeoutError');
  });
});
