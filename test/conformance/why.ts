// Conformance scenarios for `why` (issue 15): each run state a backend produces reads the
// same sentence and next command through engine.runs.explain on SQLite and on Restate. The
// exact wording of every state is test/unit/why.test.ts; here the backends' views must yield
// it. Relative times ("(in 59m 58s)") are cut before comparing.
import { expect } from 'vitest';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
const re = (s: string) => new RegExp(`^${s.replace(/[.()|[\]?+*^$]/g, (c) => `\\${c}`).replaceAll('<ISO>', ISO)}$`);
const absolute = (s: string) => s.replace(/ \((in [^)]*|due now)\)/g, '');

export function whyScenarios({ test, boot, restart, until }: ScenarioKit): void {
  test('why: sleeping, waiting, retrying, failed, cancelled and succeeded runs read the same on every backend', async () => {
    const wfs = [
      workflow('why-sleeps', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.sleep('pause', '1h'));
      }),
      workflow('why-waits', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.waitForEvent('approve', { timeout: '1h' }));
      }),
      workflow('why-retries', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) =>
          step.do('call', { retries: { limit: 5, delay: '1h', backoff: 'constant', jitter: false } }, () => {
            throw new Error('remote 503');
          }));
      }),
      workflow('why-fails', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('prep', () => 1);
          await step.do('send', () => {
            throw new TerminalError('card declined');
          });
        });
      }),
      workflow('why-ok', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.do('a', () => 1));
      }),
    ];
    const { engine } = await boot(wfs);
    const start = async (wf: string) => (await engine.trigger(wf, null)).runId;
    const [sleeps, waits, retries, fails, ok, cancelled] = await Promise.all(
      ['why-sleeps', 'why-waits', 'why-retries', 'why-fails', 'why-ok', 'why-sleeps'].map(start),
    );
    const status = async (id: string) => (await engine.runs.get(id)).status;
    await until('runs to settle', async () =>
      (await status(sleeps!)) === 'sleeping' && (await status(waits!)) === 'waiting' && (await status(retries!)) === 'retrying' &&
      (await status(fails!)) === 'failed' && (await status(ok!)) === 'succeeded' && (await status(cancelled!)) === 'sleeping', 20_000);
    await engine.runs.cancel(cancelled!);
    expect((await engine.result(cancelled!, { timeout: '20s' })).status).toBe('cancelled');

    const why = async (id: string) => {
      const e = await engine.runs.explain(id);
      return { summary: absolute(e.summary), next: e.next };
    };
    const h = async (id: string, wf: string) => `Run ${id} of workflow '${wf}' (version ${(await engine.runs.get(id)).version})`;

    expect((await why(sleeps!)).summary).toMatch(re(`${await h(sleeps!, 'why-sleeps')} is sleeping in step 'pause' until <ISO>.`));
    expect((await why(sleeps!)).next).toBe(`Nothing to do: it wakes by itself. To stop it: \`tranquil runs cancel ${sleeps}\`.`);

    const w = await why(waits!);
    expect(w.summary).toMatch(re(`${await h(waits!, 'why-waits')} is waiting in step 'approve' for signal 'approve', timing out at <ISO>; waiting since <ISO>.`));
    expect(w.next).toBe(`Send the signal: \`tranquil signal ${waits} approve --data '<json>'\`.`);

    const r = await why(retries!);
    expect(r.summary).toMatch(re(`${await h(retries!, 'why-retries')} is retrying step 'call': attempt 2 of 5 at <ISO>; last error (attempt 1): Error: remote 503.`));
    expect(r.next).toBe(`Nothing to do: the next attempt runs by itself. To stop it: \`tranquil runs cancel ${retries}\`.`);

    const f = await why(fails!);
    expect(f.summary).toBe(
      `${await h(fails!, 'why-fails')} failed: step 'send' failed on attempt 1 with TerminalError: card declined. ` +
        "runs.retry resumes it from step 'send' and discards 1 recorded step ('send'); 'send' runs again with the same idempotency key.",
    );
    expect(f.next).toBe(`Fix the cause, then resume it: \`tranquil runs retry ${fails}\`.`);

    const c = await why(cancelled!);
    // Who asked and when: test/conformance/why-asker.ts.
    expect(c.summary).toMatch(new RegExp(`^${re(`${await h(cancelled!, 'why-sleeps')} was cancelled by api at <ISO>`).source.slice(1, -1)}( and ended at ${ISO})? after 0 completed steps; the cancel reached it in step 'pause'\\.$`));
    expect(c.next).toBe(`To continue it from where it stopped: \`tranquil runs resume ${cancelled!}\`; to start it anew: \`tranquil runs rerun ${cancelled!}\`.`);

    const s = await why(ok!);
    expect(s.summary).toMatch(re(`${await h(ok!, 'why-ok')} succeeded after 1 completed step, at <ISO>.`));
    expect(s.next).toBe(`Nothing to do. Its output and steps: \`tranquil runs describe ${ok}\`.`);
  }, 60_000);

  test('why: a run whose code changed under it names the position, the call and the record', async () => {
    const mode = { step: 'a' };
    const wf = workflow('why-shifty', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do(mode.step, () => 1);
        await step.sleep('nap', 300);
        return 'done';
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('why-shifty', null);
    await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
    mode.step = 'b';
    const second: Engine = await restart(engine, [wf], dir);
    const view = await second.result(runId, { timeout: '20s' });
    const e = await second.runs.explain(runId);
    expect(e.summary.startsWith(`Run ${runId} of workflow 'why-shifty' (version ${view.version}) failed with non-determinism at position 0: the code now calls `)).toBe(true);
    expect(e.summary).toMatch(/the code now calls .*'b'.*, the journal recorded .*'a'.*\. The code changed under a run that was in flight\.$/);
    expect(e.next).toBe(`Run it with the code of version ${view.version} (deploy that version back), or see its journal: \`tranquil runs describe ${runId}\`.`);
  });
}
