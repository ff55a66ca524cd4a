// Conformance scenarios for the two `why` sentences that need what the engine records beyond
// the run's status (issue 15, docs/panel.md): a retrying run's "attempt n of m" (the step's
// retry limit is journaled with the retrying step) and a cancelled run's "by whom and when"
// (runs.cancel(id, { by }) records the asker and the time). Same text on SQLite and Restate.
import { expect } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
const literal = (s: string) => s.replace(/[.()|[\]?+*^$\\{}]/g, (c) => `\\${c}`);
/** `text` with `<ISO>` standing for any instant, `<ENDED>` for the optional " and ended at <ISO>". */
const re = (text: string) => new RegExp(`^${literal(text).replaceAll('<ISO>', ISO).replaceAll('<ENDED>', `(?: and ended at ${ISO})?`)}$`);
const absolute = (s: string) => s.replace(/ \((in [^)]*|due now)\)/g, '');

export function whyAskerScenarios({ test, boot, until }: Pick<ScenarioKit, 'test' | 'boot' | 'until'>): void {
  test('why: a retrying run says attempt n of m, when, and the last error', async () => {
    const wfs = [
      workflow('why-limit', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) =>
          step.do('call', { retries: { limit: 4, delay: '1h', backoff: 'constant', jitter: false } }, () => {
            throw new Error('remote 503');
          }));
      }),
      // No limit given: the default policy's (3 attempts) is what is journaled.
      workflow('why-default-limit', (w) => {
        w.trigger(manual());
        w.defaults({ retries: { delay: '1h' } });
        w.run(async ({ step }) =>
          step.do('fetch', () => {
            throw new Error('timeout');
          }));
      }),
    ];
    const { engine } = await boot(wfs);
    const a = (await engine.trigger('why-limit', null)).runId;
    const b = (await engine.trigger('why-default-limit', null)).runId;
    await until('both runs to be retrying', async () => (await engine.runs.get(a)).status === 'retrying' && (await engine.runs.get(b)).status === 'retrying', 20_000);
    const va = await engine.runs.get(a);
    expect(va.steps[0]).toMatchObject({ name: 'call', status: 'retrying', attempts: 1, retryLimit: 4 });
    const ea = await engine.runs.explain(a);
    expect(absolute(ea.summary)).toMatch(re(`Run ${a} of workflow 'why-limit' (version ${va.version}) is retrying step 'call': attempt 2 of 4 at <ISO>; last error (attempt 1): Error: remote 503.`));
    expect(ea.details).toEqual([expect.stringMatching(re(`step 1 'call' attempt 1 of 4 failed (Error: remote 503); next attempt at <ISO>`))]);
    const vb = await engine.runs.get(b);
    expect(vb.steps[0]).toMatchObject({ name: 'fetch', status: 'retrying', attempts: 1, retryLimit: 3 });
    expect(absolute((await engine.runs.explain(b)).summary)).toMatch(
      re(`Run ${b} of workflow 'why-default-limit' (version ${vb.version}) is retrying step 'fetch': attempt 2 of 3 at <ISO>; last error (attempt 1): Error: timeout.`),
    );
  }, 60_000);

  test('why: a cancelled run says who asked to cancel it and when', async () => {
    const wf = workflow('why-cancel-by', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.sleep('pause', '1h'));
    });
    const { engine } = await boot([wf]);
    const [byPanel, byDefault] = await Promise.all([engine.trigger('why-cancel-by', null), engine.trigger('why-cancel-by', null)]).then((r) => r.map((x) => x.runId));
    await until('both runs to sleep', async () => (await engine.runs.get(byPanel!)).status === 'sleeping' && (await engine.runs.get(byDefault!)).status === 'sleeping', 20_000);

    // A bad asker is refused in one line and asks nothing.
    await expect(engine.runs.cancel(byPanel!, { by: 'a\nb' })).rejects.toThrow(/runs\.cancel options.*by.*control characters/);
    await expect(engine.runs.cancel(byPanel!, { by: 'x'.repeat(201) })).rejects.toThrow(/by.*at most 200 characters/);
    expect((await engine.runs.get(byPanel!)).status).toBe('sleeping');

    const before = Date.now();
    await engine.runs.cancel(byPanel!, { by: 'panel' });
    await engine.runs.cancel(byDefault!);
    const after = Date.now();
    for (const id of [byPanel!, byDefault!]) expect((await engine.result(id, { timeout: '20s' })).status).toBe('cancelled');

    const v = await engine.runs.get(byPanel!);
    expect(v.cancel?.by).toBe('panel');
    const at = Date.parse(v.cancel!.at);
    // The asker's clock and this test's are the same machine's; a few ms of rounding allowed.
    expect(at).toBeGreaterThanOrEqual(before - 5);
    expect(at).toBeLessThanOrEqual(after + 5);
    const e = await engine.runs.explain(byPanel!);
    expect(e.summary).toMatch(re(`Run ${byPanel} of workflow 'why-cancel-by' (version ${v.version}) was cancelled by panel at ${v.cancel!.at}<ENDED> after 0 completed steps; the cancel reached it in step 'pause'.`));
    expect(e.next).toBe(`To continue it from where it stopped: \`tranquil runs resume ${byPanel!}\`; to start it anew: \`tranquil runs rerun ${byPanel!}\`.`);

    // No asker given: the engine API records 'api'.
    expect((await engine.runs.get(byDefault!)).cancel?.by).toBe('api');
    expect((await engine.runs.explain(byDefault!)).summary).toMatch(re(`Run ${byDefault} of workflow 'why-cancel-by' (version ${v.version}) was cancelled by api at <ISO><ENDED> after 0 completed steps; the cancel reached it in step 'pause'.`));
    // The list carries it too (the panel's list and the notifier read runs.list).
    const listed = (await engine.runs.list({ workflow: 'why-cancel-by' })).find((r) => r.runId === byPanel);
    expect(listed?.cancel).toEqual(v.cancel);
  }, 60_000);
}
