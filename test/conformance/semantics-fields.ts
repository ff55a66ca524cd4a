// Conformance scenarios for issue 19's rules on durations, sizes, step names and error
// fields (docs/semantics.md), called from runConformance(): the same outcome on every backend.
// - durations: any accepted duration works, however long (a 30-day step timeout does not
//   fire at once; 30-day sleeps, waits and backoffs are scheduled for their time);
// - size: one limit (engine config maxPayloadBytes, default 16 MiB) on a step result, a run
//   input, a signal and an event payload; over it a step fails at once, the API refuses;
// - names: '#' is refused in names the code passes, so no name equals a repeat's `name#k`;
// - error fields: a step error's own JSON-safe fields and its cause survive retries,
//   replay, a restart and the run's recorded error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { manual, event, workflow } from '@tranquil/sdk';
import { createEngine, type Engine, type RunView } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;
const MIB = 1024 * 1024;

/** Collects the process warnings named `name` while `fn` runs (and a turn after it). */
async function warningsDuring(name: string, fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => {
    if (w.name === name) seen.push(w.message);
  };
  process.on('warning', listener);
  try {
    await fn();
    await pause(20); // process warnings are emitted on a later tick
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

export function fieldsScenarios({ test, boot, restart, until }: ScenarioKit, backend: string): void {
  // ---- durations ---------------------------------------------------------------------

  test('a step timeout longer than 24.8 days bounds the attempt without firing at once', async () => {
    let attempts = 0;
    const wf = workflow('long-timeout', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) =>
        step.do('slow', { timeout: '30d', retries: { limit: 1 } }, async () => {
          attempts++;
          await pause(100);
          return 'done';
        }),
      );
    });
    const { engine } = await boot([wf]);
    let view: RunView | undefined;
    const warnings = await warningsDuring('TimeoutOverflowWarning', async () => {
      const { runId } = await engine.trigger('long-timeout', null);
      // result()'s own deadline is a user duration too, longer than one Node timer.
      view = await engine.result(runId, { timeout: '30d' });
    });
    expect(view?.error).toBeUndefined();
    expect(view?.status).toBe('succeeded');
    expect(view?.output).toBe('done');
    expect(attempts).toBe(1);
    expect(warnings).toEqual([]);
  });

  test('sleeps, wait deadlines and retry backoffs of 30 days are scheduled for their time; over 100 years is refused', async () => {
    let failures = 0;
    const wf = workflow('long-waits', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => {
        if (input.mode === 'sleep') await step.sleep('nap', '30d');
        if (input.mode === 'wait') await step.waitForEvent('reply', { timeout: '30d' });
        if (input.mode === 'retry') {
          await step.do('flaky', { retries: { limit: 2, delay: '30d', backoff: 'constant', jitter: false } }, () => {
            failures++;
            throw new Error('not yet');
          });
        }
        const refused: string[] = [];
        for (const attempt of [
          () => step.sleep('too-long', '36526d'),
          () => step.do('too-long-timeout', { timeout: '40000d' }, () => 1),
          () => step.waitForEvent('too-long-wait', { timeout: 1e300 }),
        ]) {
          try {
            await attempt();
            refused.push('accepted');
          } catch (err) {
            refused.push(`${(err as Error).name}: ${(err as Error).message}`);
          }
        }
        return refused;
      });
    });
    const { engine } = await boot([wf]);
    const expected = { sleep: 'sleeping', wait: 'waiting', retry: 'retrying' } as const;
    const runs: [string, string][] = [];
    for (const mode of Object.keys(expected) as (keyof typeof expected)[]) {
      const before = Date.now();
      const { runId } = await engine.trigger('long-waits', { mode });
      runs.push([mode, runId]);
      await until(`run to be ${expected[mode]}`, async () => (await engine.runs.get(runId)).status === expected[mode]);
      await pause(300); // a timer that overflowed would have fired by now
      const view = await engine.runs.get(runId);
      expect([mode, view.status]).toEqual([mode, expected[mode]]);
      const wakeAt = Date.parse(view.wakeAt ?? '');
      expect(wakeAt - before, `${mode}: wakeAt ${view.wakeAt}`).toBeGreaterThanOrEqual(30 * DAY - 60_000);
      expect(wakeAt - before, `${mode}: wakeAt ${view.wakeAt}`).toBeLessThanOrEqual(30 * DAY + 60_000);
    }
    expect(failures).toBe(1);
    for (const [, runId] of runs) await engine.runs.cancel(runId);
    // Over 100 years: a one-line ValidationError, in workflow code and at the API.
    const { runId } = await engine.trigger('long-waits', { mode: 'none' });
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    const refused = view.output as string[];
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r).toMatch(/^ValidationError: .*longer than 100 years/);
    await expect(engine.result(runId, { timeout: '40000d' })).rejects.toThrow(/result timeout: '40000d' is longer than 100 years/);
  });

  // ---- size --------------------------------------------------------------------------

  test('a step result over the size limit fails that step once, naming the step and the size: caught, the run goes on; uncaught, the run fails', async () => {
    let bodies = 0;
    const wf = workflow('oversized', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => {
        await step.do('small', () => 'fine');
        // 16 MiB of text plus its two quotes: 3 bytes over the default limit.
        const big = () => step.do('big', { retries: { limit: 3, delay: 10 } }, () => (bodies++, 'x'.repeat(16 * MIB + 1)));
        if (!input?.catch) return big();
        try {
          await big();
        } catch (err) {
          return `caught ${(err as Error).name}: ${(err as Error).message}`;
        }
        return 'unreachable';
      });
    });
    const message = "result of step 'big' is 16777219 bytes of JSON (16.0 MiB), over the limit of 16777216 bytes (16 MiB, engine config maxPayloadBytes)";
    const { engine } = await boot([wf]);
    const view = await engine.result((await engine.trigger('oversized', null)).runId, { timeout: '20s' });
    expect(view.status).toBe('failed');
    expect(view.error).toEqual({ name: 'SerializationError', message });
    expect(bodies).toBe(1);
    expect(view.steps.find((s) => s.name === 'big')).toMatchObject({ status: 'failed', attempts: 1 });
    const caught = await engine.result((await engine.trigger('oversized', { catch: true })).runId, { timeout: '20s' });
    expect(caught.status).toBe('succeeded');
    expect(caught.output).toBe(`caught SerializationError: ${message}`);
    expect(bodies).toBe(2);
  }, 60_000);

  test('an input, event or signal payload over the size limit is refused at the API and nothing is stored', async () => {
    const big = { blob: 'x'.repeat(16 * MIB) };
    const waiter = workflow('sized-wait', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('reply', { timeout: '20s' }));
    });
    const listener = workflow('sized-event', (w) => {
      w.trigger(event('sized.happened'));
      w.run(async ({ input }) => input);
    });
    const { engine } = await boot([waiter, listener]);
    const bytes = JSON.stringify(big).length; // ASCII: bytes = characters
    const over = new RegExp(`is ${bytes} bytes of JSON \\(16\\.0 MiB\\), over the limit of 16777216 bytes \\(16 MiB, engine config maxPayloadBytes\\)$`);
    await expect(engine.trigger('sized-wait', big)).rejects.toThrow(over);
    await expect(engine.trigger('sized-wait', big)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/^input of trigger\('sized-wait'\) /) });
    expect(await engine.runs.list({ workflow: 'sized-wait' })).toEqual([]);
    await expect(engine.emit('sized.happened', big, { id: 'big-1' })).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(over) });
    expect(await engine.events.list({ name: 'sized.happened' })).toEqual([]);
    expect(await engine.runs.list({ workflow: 'sized-event' })).toEqual([]);
    const { runId } = await engine.trigger('sized-wait', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await expect(engine.signal(runId, 'reply', big)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(over) });
    // Signals are FIFO: had the big one been kept, the wait would have taken it first.
    await engine.signal(runId, 'reply', 'small');
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.output).toBe('small');
  }, 60_000);

  test('the size limit is engine config (maxPayloadBytes), the same for results and arguments', async () => {
    const wf = workflow('tight', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input, ctx }) => {
        if (input.emit) {
          try {
            await ctx.emit('big', 'e'.repeat(input.emit));
          } catch (err) {
            return `emit refused: ${(err as Error).message}`;
          }
        }
        if (input.out) return 'o'.repeat(input.out);
        return step.do('make', () => 'y'.repeat(input.n));
      });
    });
    const dir = mkdtempSync(join(tmpdir(), `tranquil-conf-${backend}-limit-`));
    let engine: Engine | undefined;
    try {
      engine = await createEngine({ backend: backend as 'sqlite' | 'restate', dataDir: dir, workflows: [wf], maxPayloadBytes: 64 * 1024 });
      await engine.start();
      const ok = await engine.result((await engine.trigger('tight', { n: 60_000 })).runId, { timeout: '20s' });
      expect(ok.status).toBe('succeeded');
      const bad = await engine.result((await engine.trigger('tight', { n: 70_000 })).runId, { timeout: '20s' });
      expect(bad.status).toBe('failed');
      expect(bad.error?.message).toBe("result of step 'make' is 70002 bytes of JSON (68 KiB), over the limit of 65536 bytes (64 KiB, engine config maxPayloadBytes)");
      // The run's own output and the events it emits obey the same limit.
      const out = await engine.result((await engine.trigger('tight', { n: 1, out: 70_000 })).runId, { timeout: '20s' });
      expect(out.status).toBe('failed');
      expect(out.error?.message).toMatch(/^workflow 'tight' output is 70002 bytes of JSON .*over the limit of 65536 bytes/);
      const emitted = await engine.result((await engine.trigger('tight', { n: 1, emit: 70_000 })).runId, { timeout: '20s' });
      expect(emitted.output).toMatch(/^emit refused: ctx.emit\('big'\) payload is 70002 bytes of JSON .*over the limit of 65536 bytes/);
      await expect(engine.trigger('tight', { n: 1, pad: 'z'.repeat(70_000) })).rejects.toThrow(/^input of trigger\('tight'\) is 70016 bytes of JSON \(68 KiB\), over the limit of 65536 bytes/);
    } finally {
      await engine?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  // ---- names -------------------------------------------------------------------------

  test("a step name with '#' is refused, so it never takes a repeated step's name or key", async () => {
    const keys: string[] = [];
    const wf = workflow('hash-names', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const results: unknown[] = [];
        results.push(await step.do('charge', ({ idempotencyKey }) => (keys.push(idempotencyKey), 'first')));
        const refused: string[] = [];
        for (const attempt of [
          () => step.do('charge#2', ({ idempotencyKey }) => (keys.push(idempotencyKey), 'impostor')),
          () => step.sleep('nap#1', 10),
          () => step.waitForEvent('reply#1', { timeout: 10 }),
        ]) {
          try {
            await attempt();
            refused.push('accepted');
          } catch (err) {
            refused.push(`${(err as Error).name}: ${(err as Error).message}`);
          }
        }
        results.push(await step.do('charge', ({ idempotencyKey }) => (keys.push(idempotencyKey), 'second')));
        await step.sleep('replay-me', 50);
        return { results, refused };
      });
    });
    const { engine } = await boot([wf]);
    const { runId } = await engine.trigger('hash-names', null);
    const view = await engine.result(runId, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    const out = view.output as { results: string[]; refused: string[] };
    expect(out.results).toEqual(['first', 'second']);
    expect(out.refused).toEqual([
      "ValidationError: step name 'charge#2' contains '#', which is reserved for repeated names (the 2nd step named 'x' is 'x#2')",
      "ValidationError: step name 'nap#1' contains '#', which is reserved for repeated names (the 2nd step named 'x' is 'x#2')",
      "ValidationError: step name 'reply#1' contains '#', which is reserved for repeated names (the 2nd step named 'x' is 'x#2')",
    ]);
    expect(keys).toEqual([`${runId}/charge`, `${runId}/charge#2`]);
    expect(view.steps.map((s) => s.name)).toEqual(['charge', 'charge#2', 'replay-me']);
    await expect(engine.signal(runId, 'reply#1', 1)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/^signal name 'reply#1' contains '#'/) });
  });

  // ---- error fields ------------------------------------------------------------------

  test("a step error's own fields and cause survive retries, replay, a restart and the run's recorded error", async () => {
    const attempts = { n: 0 };
    const fail = () => {
      attempts.n++;
      const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      const err = Object.assign(new Error('upstream said no', { cause }), {
        code: 'E_UPSTREAM',
        blob: 'z'.repeat(5000), // over the 4 KiB budget: left out
        status: 503,
        details: { retryAfter: 5, tags: ['a', 'b'] },
        callback: () => 1, // not JSON: left out
      });
      throw err;
    };
    const seen = (e: unknown) => {
      const err = e as Error & { code?: unknown; status?: unknown; details?: unknown; blob?: unknown; cause?: Error & { code?: unknown } };
      return {
        isError: err instanceof Error, name: err.name, message: err.message, code: err.code, status: err.status, details: err.details,
        blob: err.blob === undefined ? 'absent' : 'present', cause: err.cause?.message, causeCode: err.cause?.code,
      };
    };
    const wf = workflow('error-fields', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => {
        let caught: unknown;
        try {
          await step.do('call', { retries: { limit: 2, delay: 10, backoff: 'constant', jitter: false } }, fail);
        } catch (err) {
          if (!input.catchIt) throw err;
          caught = seen(err);
        }
        const first = await step.do('first-execution', () => caught); // recorded as first seen
        await step.sleep('nap', 600); // the engine restarts here: the error comes back from the journal
        return { first, replayed: caught };
      });
    });
    const expected = {
      isError: true, name: 'Error', message: 'upstream said no', code: 'E_UPSTREAM', status: 503, details: { retryAfter: 5, tags: ['a', 'b'] },
      blob: 'absent', cause: 'socket hang up', causeCode: 'ECONNRESET',
    };
    const { engine, dir } = await boot([wf]);
    const caught = (await engine.trigger('error-fields', { catchIt: true })).runId;
    await until('run to sleep', async () => (await engine.runs.get(caught)).status === 'sleeping');
    const second = await restart(engine, [wf], dir);
    const view = await second.result(caught, { timeout: '20s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ first: expected, replayed: expected });
    expect(attempts.n).toBe(2);

    const recorded = {
      name: 'Error',
      message: 'upstream said no',
      fields: { code: 'E_UPSTREAM', status: 503, details: { retryAfter: 5, tags: ['a', 'b'] } },
      cause: { name: 'Error', message: 'socket hang up', fields: { code: 'ECONNRESET' } },
    };
    const failed = await second.result((await second.trigger('error-fields', { catchIt: false })).runId, { timeout: '20s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual(recorded);
    expect(failed.steps.find((s) => s.name === 'call')).toMatchObject({ status: 'failed', attempts: 2, error: recorded });
  }, 60_000);
}
