// Conformance scenarios for capability steps (issue 16, docs/host.md), called from
// runConformance(): step.use parks a run with no eligible provider (status `parked`, `why`
// names capability and affinity), the park survives a restart, a matching provider resumes
// it, a provider of another partition never serves it (containment), provider errors retry
// like step.do, and a withdrawn provider is no longer called.
import { expect } from 'vitest';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function capabilityScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('capability: parks with no provider, explains why, survives a restart, resumes only on a matching provider', async () => {
    const wf = workflow('scrape', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const page = await step.use<{ title: string; by: string }>('browser.scrape', { url: input.url }, { affinity: { partition: 'work' } });
        const after = await step.do('after', () => `saw ${page.title}`);
        return { page, after };
      });
    });
    const wrongCalls: unknown[] = [];
    const { engine, dir } = await boot([wf]);
    // Registered before the run and all along: another partition never serves it.
    engine.capabilities.provide('browser.scrape', { partition: 'home' }, (input) => (wrongCalls.push(input), { title: 'wrong', by: 'home' }));
    const { runId } = await engine.trigger('scrape', { url: 'https://example.test/a' });
    await until('the run to park', async () => (await engine.runs.get(runId)).status === 'parked');
    const parked = await engine.runs.get(runId);
    expect(parked.steps).toHaveLength(1);
    expect(parked.steps[0]).toMatchObject({ name: 'browser.scrape', kind: 'use', status: 'parked', attempts: 0 });
    const why = await engine.runs.explain(runId);
    expect(why.status).toBe('parked');
    expect(why.summary).toContain("is parked in step 'browser.scrape'");
    expect(why.summary).toContain("capability 'browser.scrape' matching partition=work");
    expect(why.waitingFor).toMatchObject({ kind: 'capability', capability: 'browser.scrape', affinity: { partition: 'work' } });

    const again = await restart(engine, [wf], dir);
    expect((await again.runs.get(runId)).status).toBe('parked');
    again.capabilities.provide('browser.scrape', { partition: 'home' }, (input) => (wrongCalls.push(input), { title: 'wrong', by: 'home' }));
    const keys: string[] = [];
    // Extra attributes are fine: containment asks only for the affinity's keys.
    again.capabilities.provide('browser.scrape', { partition: 'work', window: 'w1' }, (input, info) => {
      keys.push(info.idempotencyKey);
      return { title: `title of ${(input as { url: string }).url}`, by: 'work' };
    });
    const done = await again.result(runId, { timeout: '20s' });
    expect(done.status).toBe('succeeded');
    expect(done.output).toEqual({ page: { title: 'title of https://example.test/a', by: 'work' }, after: 'saw title of https://example.test/a' });
    expect(wrongCalls).toEqual([]);
    expect(keys).toEqual([`${runId}/browser.scrape`]);
    expect(done.steps[0]).toMatchObject({ name: 'browser.scrape', kind: 'use', status: 'succeeded', attempts: 1, result: { by: 'work' } });
  }, 60_000);

  test('capability: provider errors retry like step.do, a TerminalError is caught by the code, a withdrawn provider parks the run', async () => {
    let calls = 0;
    const wf = workflow('flaky-host', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const ok = await step.use('device.read', null, { retries: { limit: 3, delay: 10, jitter: false } });
        let refused = '';
        try {
          await step.use('device.write', { v: 1 });
        } catch (err) {
          refused = `${(err as Error).name}: ${(err as Error).message}`;
        }
        const last = await step.use('device.read', null);
        return { ok, refused, last };
      });
    });
    const { engine } = await boot([wf]);
    // Withdrawn as it answers (a window closed): the run's next device.read finds no provider.
    const withdraw: () => void = engine.capabilities.provide('device.read', {}, (_input, info) => {
      calls++;
      if (info.attempt === 1) throw new Error('device busy');
      withdraw();
      return `read on attempt ${info.attempt}`;
    });
    engine.capabilities.provide('device.write', {}, () => {
      throw new TerminalError('read-only device');
    });
    const { runId } = await engine.trigger('flaky-host', null);
    await until('the run to park on the second read', async () => (await engine.runs.get(runId)).status === 'parked');
    const parked = await engine.runs.get(runId);
    expect(parked.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['device.read', 'succeeded', 2],
      ['device.write', 'failed', 1],
      ['device.read#2', 'parked', 0],
    ]);
    engine.capabilities.provide('device.read', { any: true }, () => 'second provider');
    const done = await engine.result(runId, { timeout: '20s' });
    expect(done.output).toEqual({ ok: 'read on attempt 2', refused: 'TerminalError: read-only device', last: 'second provider' });
    expect(calls).toBe(2);
  }, 60_000);

  test('capability: cancelling a parked run throws CancelledError into the parked step (its cleanup runs); bad names are refused; a parked branch beside a wait resumes', async () => {
    const bad = workflow('bad-use', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.use('no spaces allowed', null));
    });
    const badAffinity = workflow('bad-affinity', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.use('ok', null, { affinity: { room: ['a'] } as never }));
    });
    // A parked branch beside a branch waiting for a signal: the run shows `waiting`; a
    // provider still resumes the parked branch.
    const both = workflow('parked-and-waiting', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => Promise.all([step.use('printer.print', 'doc', { affinity: { floor: 2 } }), step.waitForEvent('go')]));
    });
    const wf = workflow('parked-cancel', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          return await step.use('camera.snap', null, { affinity: { room: 'lab' } });
        } finally {
          await step.do('cleanup', () => 'cleaned');
        }
      });
    });
    const { engine } = await boot([wf, bad, badAffinity, both]);
    const mixed = (await engine.trigger('parked-and-waiting', null)).runId;
    await until('the mixed run to suspend', async () => (await engine.runs.get(mixed)).steps.some((s) => s.status === 'parked'));
    await until('the mixed run to show waiting', async () => (await engine.runs.get(mixed)).status === 'waiting');
    engine.capabilities.provide('printer.print', { floor: 2 }, (doc) => `printed ${String(doc)}`);
    await until('the parked branch to finish', async () => (await engine.runs.get(mixed)).steps.some((s) => s.kind === 'use' && s.status === 'succeeded'));
    await engine.signal(mixed, 'go', 'now');
    expect((await engine.result(mixed, { timeout: '20s' })).output).toEqual(['printed doc', 'now']);
    expect(() => engine.capabilities.provide('x y', {}, () => null)).toThrow(/capability name/);
    expect(() => engine.capabilities.provide('ok', { nested: { a: 1 } } as never, () => null)).toThrow(/attributes of capability 'ok'/);
    const refused = await engine.result((await engine.trigger('bad-use', null)).runId, { timeout: '20s' });
    expect(refused.status).toBe('failed');
    expect(refused.error?.message).toMatch(/^step\.use\('no spaces allowed'\): capability name/);
    const refused2 = await engine.result((await engine.trigger('bad-affinity', null)).runId, { timeout: '20s' });
    expect(refused2.error?.message).toMatch(/^step\.use\('ok'\): affinity room: /);
    const { runId } = await engine.trigger('parked-cancel', null);
    await until('the run to park', async () => (await engine.runs.get(runId)).status === 'parked');
    await engine.runs.cancel(runId);
    const v = await engine.result(runId, { timeout: '20s' });
    expect(v.status).toBe('cancelled');
    expect(v.steps.map((s) => [s.name, s.kind, s.status, s.error?.name])).toEqual([
      ['camera.snap', 'use', 'failed', 'CancelledError'],
      ['cleanup', 'do', 'succeeded', undefined],
    ]);
  }, 30_000);
}
