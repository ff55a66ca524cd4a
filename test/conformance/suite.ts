// The conformance suite: ONE function every backend runs from a few-line test file.
// Scenarios use short real durations (a Restate backend cannot fake time); long-duration
// versions live in SQLite-only tests with the testing kit. A skip is data with a reason.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { event, manual, TerminalError, TimeoutError, workflow, type WorkflowDefinition } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import { cancelScenarios } from './semantics-cancel.ts';
import { concurrencyScenarios } from './concurrency.ts';
import { fieldsScenarios } from './semantics-fields.ts';
import { cliScenarios } from './cli.ts';
import { retryScenarios } from './semantics-retry.ts';
import { triggerScenarios } from './triggers.ts';
import { signalScenarios } from './semantics-signals.ts';
import { signalOrderScenarios } from './semantics-signal-order.ts';
import { plainScenarios } from './plain.ts';
import { capabilityScenarios } from './capabilities.ts';
import { capabilityRetryScenarios } from './capability-retry.ts';
import { whyScenarios } from './why.ts';
import { whyAskerScenarios } from './why-asker.ts';
import { notificationScenarios } from './notifications.ts';
import { listTimeScenarios } from './list-time.ts';
import { codecScenarios } from './codec.ts';
import { ownResultScenarios } from './own-results.ts';
import { valueScenarios } from './values.ts';
import { schemaScenarios } from './schemas.ts';
import { childScenarios } from './children.ts';
import { peerPortScenarios } from './peer-ports.ts';
import { childHandleScenarios } from './children-handles.ts';
import { controlScenarios } from './control.ts';
import { forkScenarios } from './control-fork.ts';
import { workflowPauseScenarios } from './control-workflow-pause.ts';
import { queueScenarios } from './queues.ts';
import { runQueueScenarios } from './run-queues.ts';
import { debounceScenarios } from './debounce.ts';
import { debounceTriggerScenarios } from './debounce-triggers.ts';
import { runFlowScenarios } from './run-flow.ts';
import { liveOutputScenarios } from './live-output.ts';

export interface ConformanceTarget {
  name: string;
  /** A started engine over `dataDir`. Called again with the same dataDir to "restart". */
  makeEngine(opts: { workflows: WorkflowDefinition[]; dataDir: string; /** Restate: step events logged in Restate (config restate.liveAcrossReplicas). */ liveAcrossReplicas?: boolean }): Promise<Engine>;
  skip?: { reason: string; tests: string[] }[];
  /** TRANQUIL_BACKEND for the CLI scenarios' child processes; default: `name`. */
  backend?: 'sqlite' | 'restate';
  /** Register only this part of the cases, so one backend's suite can be split across test
   *  files that run at the same time (restate-a/-b.test.ts). Default: all of them. */
  part?: SuitePart;
  /** A fresh data dir for a case's first engine (default: an empty temp dir); removed after
   *  the case. The Restate target hands out dirs whose server already runs (restate-prewarm.ts). */
  freshDir?(): Promise<string>;
  /** After a case's engines stopped: what freshDir started for `dir` and no engine stopped. */
  releaseDir?(dir: string): Promise<void>;
  /** Called once after the last case (what freshDir prepared and no case took). */
  dispose?(): Promise<void>;
}

/** Part `index` (1-based) of `of`: every `of`-th case in registration order, starting at the
 *  `index`-th. Alternating keeps the parts about equally long without a list to maintain. */
export interface SuitePart {
  index: number;
  of: number;
}

/** Whether each case, asked in registration order, belongs to `part`. */
export function partFilter(part: SuitePart | undefined): () => boolean {
  if (part && !(Number.isInteger(part.of) && part.of >= 1 && Number.isInteger(part.index) && part.index >= 1 && part.index <= part.of)) {
    throw new Error(`bad suite part ${JSON.stringify(part)}: want { index: 1..of, of: >= 1 }`);
  }
  let seen = 0;
  return () => part === undefined || seen++ % part.of === part.index - 1;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A promise the test releases by hand. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { wait: () => p, open };
}

export function runConformance(target: ConformanceTarget): void {
  const skipped = new Map<string, string>();
  for (const s of target.skip ?? []) for (const t of s.tests) skipped.set(t, s.reason);

  const inPart = partFilter(target.part);

  describe(`conformance: ${target.name}${target.part ? ` (part ${target.part.index} of ${target.part.of})` : ''}`, () => {
    const open: Engine[] = [];
    const dirs: string[] = [];
    afterEach(async () => {
      for (const e of open.splice(0)) await e.stop().catch(() => {});
      for (const d of dirs.splice(0)) {
        await target.releaseDir?.(d);
        rmSync(d, { recursive: true, force: true });
      }
    });
    afterAll(async () => target.dispose?.());

    async function boot(workflows: WorkflowDefinition[], dataDir?: string, opts: { liveAcrossReplicas?: boolean } = {}) {
      const dir = dataDir ?? (target.freshDir ? await target.freshDir() : mkdtempSync(join(tmpdir(), `tranquil-conf-${target.name}-`)));
      if (!dataDir) dirs.push(dir);
      const engine = await target.makeEngine({ workflows, dataDir: dir, ...opts });
      open.push(engine);
      return { engine, dir };
    }

    async function restart(engine: Engine, workflows: WorkflowDefinition[], dir: string, opts: { liveAcrossReplicas?: boolean } = {}): Promise<Engine> {
      await engine.stop();
      return (await boot(workflows, dir, opts)).engine;
    }

    const test = (name: string, fn: () => Promise<void>, timeout = 30_000) => {
      if (!inPart()) return;
      const reason = skipped.get(name);
      if (reason) it.skip(`${name} [skipped: ${reason}]`, fn);
      else it(name, fn, timeout);
    };

    test('replay returns recorded results without re-running step bodies', async () => {
      const calls = { a: 0, b: 0 };
      const wf = workflow('replay', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          const a = await step.do('a', () => ++calls.a);
          await step.sleep('nap', 150);
          const b = await step.do('b', () => ++calls.b);
          return { a, b };
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('replay', {});
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual({ a: 1, b: 1 });
      expect(calls).toEqual({ a: 1, b: 1 });
      expect(view.steps.filter((s) => s.kind === 'do').map((s) => [s.name, s.status, s.attempts])).toEqual([
        ['a', 'succeeded', 1],
        ['b', 'succeeded', 1],
      ]);
    });

    test('an interrupted step re-runs after restart with the same idempotency key', async () => {
      const keys: string[] = [];
      const hold = gate();
      const wf = workflow('interrupt', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          const r = await step.do('charge', async ({ idempotencyKey, attempt }) => {
            keys.push(idempotencyKey);
            if (keys.length === 1) await hold.wait(); // first execution is cut off by the "crash"
            return { charged: true, attempt };
          });
          return r;
        });
      });
      const { engine, dir } = await boot([wf]);
      const { runId } = await engine.trigger('interrupt', {});
      await until('first attempt to start', () => keys.length === 1);
      const second = await restart(engine, [wf], dir);
      const view = await second.result(runId, { timeout: '20s' });
      hold.open();
      expect(view.status).toBe('succeeded');
      expect(keys.length).toBeGreaterThanOrEqual(2);
      expect(new Set(keys)).toEqual(new Set([`${runId}/charge`]));
    });

    test('retries with backoff, then fails with the last error', async () => {
      const seen: { attempt: number; key: string; at: number }[] = [];
      const wf = workflow('flaky', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('call', { retries: { limit: 3, backoff: 'constant', delay: 60, jitter: false } }, ({ attempt, idempotencyKey }) => {
            seen.push({ attempt, key: idempotencyKey, at: Date.now() });
            throw new Error(`boom ${attempt}`);
          });
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('flaky', null);
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.status).toBe('failed');
      expect(view.error).toMatchObject({ message: 'boom 3' });
      expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
      expect(new Set(seen.map((s) => s.key))).toEqual(new Set([`${runId}/call`]));
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(55);
      expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(55);
      const call = view.steps.find((s) => s.name === 'call')!;
      expect(call).toMatchObject({ status: 'failed', attempts: 3, error: { message: 'boom 3' } });
    });

    test('a TerminalError is not retried and is catchable by workflow code', async () => {
      let attempts = 0;
      const wf = workflow('terminal', (w) => {
        w.trigger(manual());
        w.run(async ({ step, input }) => {
          try {
            await step.do('charge', () => {
              attempts++;
              throw new TerminalError('card declined');
            });
          } catch (err) {
            if (input.catchIt && err instanceof TerminalError) return { recovered: err.message };
            throw err;
          }
        });
      });
      const { engine } = await boot([wf]);
      const failed = await engine.result((await engine.trigger('terminal', { catchIt: false })).runId, { timeout: '20s' });
      expect(failed.status).toBe('failed');
      expect(failed.error).toEqual({ name: 'TerminalError', message: 'card declined' });
      expect(attempts).toBe(1);
      const caught = await engine.result((await engine.trigger('terminal', { catchIt: true })).runId, { timeout: '20s' });
      expect(caught.status).toBe('succeeded');
      expect(caught.output).toEqual({ recovered: 'card declined' });
      expect(attempts).toBe(2);
    });

    test('a sleep survives an engine restart and wakes no earlier than asked', async () => {
      const wf = workflow('sleeper', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          const before = await step.do('before', () => Date.now());
          await step.sleep('nap', 600);
          const after = await step.do('after', () => Date.now());
          return { before, after };
        });
      });
      const { engine, dir } = await boot([wf]);
      const { runId } = await engine.trigger('sleeper', null);
      await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
      const second = await restart(engine, [wf], dir);
      const view = await second.result(runId, { timeout: '20s' });
      expect(view.status).toBe('succeeded');
      const out = view.output as { before: number; after: number };
      expect(out.after - out.before).toBeGreaterThanOrEqual(590);
    });

    test('stop() ends a pending result() with an error instead of leaving it waiting', async () => {
      const wf = workflow('long-nap', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.sleep('nap', '1h'));
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('long-nap', null);
      await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
      const pending = engine.result(runId).then(() => 'resolved', (err: Error) => err);
      await sleep(50);
      await engine.stop();
      // No deadline was given: without the fix this await never ends (the test times out).
      const outcome = await pending;
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toMatch(/engine stopped/);
    });

    test('waitForEvent is resolved by a signal; signals sent early are kept, FIFO, one per wait', async () => {
      const wf = workflow('approval', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.sleep('let-signals-arrive', 200);
          const first = await step.waitForEvent('reply');
          const second = await step.waitForEvent('reply');
          const third = await step.waitForEvent('reply', { timeout: '20s' });
          return [first, second, third];
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('approval', null);
      await engine.signal(runId, 'reply', { n: 1 }); // before any wait is reached
      await engine.signal(runId, 'reply', { n: 2 });
      await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
      await engine.signal(runId, 'reply', { n: 3 });
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    });

    test('waitForEvent times out with TimeoutError; a late signal goes to the next wait', async () => {
      const wf = workflow('timeout', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          let first: unknown;
          try {
            first = await step.waitForEvent('reply', { timeout: 150 });
          } catch (err) {
            first = err instanceof TimeoutError ? 'timed out' : `other: ${(err as Error).name}`;
          }
          const second = await step.waitForEvent('reply');
          return { first, second };
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('timeout', null);
      await until('first wait to time out', async () => (await engine.runs.get(runId)).steps.some((s) => s.status === 'timedout'));
      await engine.signal(runId, 'reply', 'late');
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.output).toEqual({ first: 'timed out', second: 'late' });
    });

    test('ctx.now() and ctx.random() are stable across replay', async () => {
      const wf = workflow('journaled', (w) => {
        w.trigger(manual());
        w.run(async ({ step, ctx }) => {
          const t = ctx.now();
          const r = ctx.random();
          const seen = await step.do('capture', () => ({ t, r }));
          await step.sleep('nap', 100); // forces a replay of everything above
          return { t, r, seen, runId: ctx.runId, workflow: ctx.workflow };
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('journaled', null);
      const view = await engine.result(runId, { timeout: '20s' });
      const out = view.output as { t: number; r: number; seen: { t: number; r: number }; runId: string; workflow: string };
      expect(out.seen).toEqual({ t: out.t, r: out.r });
      expect(out.r).toBeGreaterThanOrEqual(0);
      expect(out.r).toBeLessThan(1);
      expect(Math.abs(out.t - Date.now())).toBeLessThan(60_000);
      expect(out.runId).toBe(runId);
      expect(out.workflow).toBe('journaled');
    });

    test('non-determinism is detected and names run, position, expected and recorded step', async () => {
      const mode = { step: 'a' };
      const wf = workflow('shifty', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do(mode.step, () => 1);
          await step.sleep('nap', 300);
          return 'done';
        });
      });
      const { engine, dir } = await boot([wf]);
      const { runId } = await engine.trigger('shifty', null);
      await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
      mode.step = 'b';
      const second = await restart(engine, [wf], dir);
      const view = await second.result(runId, { timeout: '20s' });
      expect(view.status).toBe('failed');
      expect(view.error?.name).toBe('NonDeterminismError');
      expect(view.error?.message).toContain(runId);
      expect(view.error?.message).toContain("'b'");
      expect(view.error?.message).toContain("'a'");
      expect(view.error?.message).toMatch(/position 0/);
    });

    test('the same caller run id starts one run', async () => {
      let calls = 0;
      const wf = workflow('once', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.do('count', () => ++calls));
      });
      const { engine } = await boot([wf]);
      const a = await engine.trigger('once', { x: 1 }, { runId: 'order-42' });
      const b = await engine.trigger('once', { x: 2 }, { runId: 'order-42' });
      expect(a).toEqual({ runId: 'order-42', created: true });
      expect(b).toEqual({ runId: 'order-42', created: false });
      const view = await engine.result('order-42', { timeout: '20s' });
      expect(view.input).toEqual({ x: 1 });
      expect(calls).toBe(1);
    });

    test('the same event id starts one run per subscriber, once', async () => {
      const wf = workflow('on-signup', (w) => {
        w.trigger(event('user.signed_up'));
        w.run(async ({ input, step }) => step.do('greet', () => `hi ${input.userId}`));
      });
      const { engine } = await boot([wf]);
      const first = await engine.emit('user.signed_up', { userId: 'u1' }, { id: 'evt-1' });
      const again = await engine.emit('user.signed_up', { userId: 'u1' }, { id: 'evt-1' });
      expect(first.duplicate).toBe(false);
      expect(first.runIds).toHaveLength(1);
      expect(again).toEqual({ runIds: first.runIds, duplicate: true });
      const view = await engine.result(first.runIds[0]!, { timeout: '20s' });
      expect(view.output).toBe('hi u1');
      expect((await engine.runs.list({ workflow: 'on-signup' })).length).toBe(1);
    });

    test('cancel stops a sleeping run at once; cancel of a finished or unknown run rejects', async () => {
      const wf = workflow('cancellable', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.sleep('long', '1h');
          return 'woke';
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('cancellable', null);
      await until('run to sleep', async () => (await engine.runs.get(runId)).status === 'sleeping');
      await engine.runs.cancel(runId);
      const view = await engine.result(runId, { timeout: '5s' });
      expect(view.status).toBe('cancelled');
      await expect(engine.runs.cancel(runId)).rejects.toThrow(runId);
      expect((await engine.runs.get(runId)).status).toBe('cancelled');
      await expect(engine.runs.cancel('no-such-run')).rejects.toThrow(/no-such-run/);
      await expect(engine.signal('no-such-run', 'x', 1)).rejects.toThrow(/no-such-run/);
    });

    test('cancel of a running step takes effect at the next step boundary', async () => {
      const hold = gate();
      let after = 0;
      const wf = workflow('cancel-running', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('slow', async () => {
            await hold.wait();
            return 1;
          });
          await step.do('after', () => ++after);
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('cancel-running', null);
      await until('step to start', async () => (await engine.runs.get(runId)).status === 'running');
      await sleep(50);
      await engine.runs.cancel(runId);
      hold.open();
      const view = await engine.result(runId, { timeout: '10s' });
      expect(view.status).toBe('cancelled');
      expect(after).toBe(0);
    });

    test('retry of a failed run resumes it with recorded results and the same key', async () => {
      const state = { healthy: false, first: 0, keys: [] as string[] };
      const wf = workflow('fixable', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          const a = await step.do('first', () => ++state.first);
          const b = await step.do('second', { retries: { limit: 2, delay: 10, backoff: 'constant', jitter: false } }, ({ idempotencyKey }) => {
            state.keys.push(idempotencyKey);
            if (!state.healthy) throw new Error('downstream unavailable');
            return 'ok';
          });
          return { a, b };
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('fixable', null);
      const failed = await engine.result(runId, { timeout: '20s' });
      expect(failed.status).toBe('failed');
      await expect(engine.runs.retry('no-such-run')).rejects.toThrow(/no-such-run/);
      state.healthy = true;
      await engine.runs.retry(runId);
      const view = await engine.result(runId, { timeout: '20s' });
      expect(view.status).toBe('succeeded');
      expect(view.output).toEqual({ a: 1, b: 'ok' });
      expect(state.first).toBe(1);
      expect(new Set(state.keys)).toEqual(new Set([`${runId}/second`]));
      await expect(engine.runs.retry(runId)).rejects.toThrow(/succeeded/);
    });

    test('explain says what a run waits for and which attempt of which step failed', async () => {
      const wf = workflow('explained', (w) => {
        w.trigger(manual());
        w.run(async ({ step, input }) => {
          if (input.fail) {
            await step.do('send', { retries: { limit: 2, delay: 10, jitter: false } }, () => {
              throw new Error('smtp 451');
            });
          }
          await step.sleep('cool-off', '1h');
        });
      });
      const { engine } = await boot([wf]);
      const sleeping = (await engine.trigger('explained', { fail: false })).runId;
      await until('run to sleep', async () => (await engine.runs.get(sleeping)).status === 'sleeping');
      const a = await engine.runs.explain(sleeping);
      expect(a.summary).toMatch(/sleeping in step 'cool-off' until \d{4}-/);
      const failing = (await engine.trigger('explained', { fail: true })).runId;
      await engine.result(failing, { timeout: '20s' });
      const b = await engine.runs.explain(failing);
      expect(b.summary).toMatch(/step 'send' failed on attempt 2 with Error: smtp 451/);
    });

    test('step results keep their shape on first execution; a result that cannot be stored fails its step once, uncaught the run', async () => {
      let badAttempts = 0;
      class Owner {}
      const wf = workflow('json', (w) => {
        w.trigger(manual());
        w.run(async ({ step, input }) => {
          const d = await step.do('date', () => ({ at: new Date(0), gone: undefined, n: 1 }));
          if (input.bad) await step.do('bad', { retries: { limit: 3, delay: 10 } }, () => ++badAttempts && { owner: new Owner() });
          return { d, isDate: d.at instanceof Date, hasGone: Object.hasOwn(d, 'gone') };
        });
      });
      const { engine } = await boot([wf]);
      const ok = await engine.result((await engine.trigger('json', { bad: false })).runId, { timeout: '20s' });
      expect(ok.output).toEqual({ d: { at: new Date(0), gone: undefined, n: 1 }, isDate: true, hasGone: true });
      const bad = await engine.result((await engine.trigger('json', { bad: true })).runId, { timeout: '20s' });
      expect(bad.status).toBe('failed');
      expect(bad.error).toEqual({ name: 'SerializationError', message: "result of step 'bad' at .owner: class instance Owner is not storable; return plain data" });
      expect(badAttempts).toBe(1);
    });

    test('repeated step names get distinct keys; nested steps and empty names are rejected', async () => {
      const keys: string[] = [];
      const wf = workflow('names', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          for (let i = 0; i < 3; i++) await step.do('poll', ({ idempotencyKey }) => keys.push(idempotencyKey));
          let nested = 'not rejected';
          await step.do('outer', async () => {
            try {
              await step.do('inner', () => 1);
            } catch (err) {
              nested = (err as Error).message;
            }
          });
          let empty = 'not rejected';
          try {
            await step.do('', () => 1);
          } catch (err) {
            empty = (err as Error).message;
          }
          return { nested, empty };
        });
      });
      const { engine } = await boot([wf]);
      const { runId } = await engine.trigger('names', null);
      const view = await engine.result(runId, { timeout: '20s' });
      expect(keys).toEqual([`${runId}/poll`, `${runId}/poll#2`, `${runId}/poll#3`]);
      const out = view.output as { nested: string; empty: string };
      expect(out.nested).toMatch(/inside a step\.do body/);
      expect(out.empty).toMatch(/non-empty/);
    });

    test('a step timeout bounds each attempt and counts as a failed attempt', async () => {
      const wf = workflow('slowpoke', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('slow', { timeout: 80, retries: { limit: 2, delay: 10, jitter: false } }, () => sleep(2000).then(() => 'late'));
        });
      });
      const { engine } = await boot([wf]);
      const view = await engine.result((await engine.trigger('slowpoke', null)).runId, { timeout: '20s' });
      expect(view.status).toBe('failed');
      expect(view.error?.name).toBe('TimeoutError');
      expect(view.steps.find((s) => s.name === 'slow')).toMatchObject({ status: 'failed', attempts: 2 });
    });

    test('non-Error throws are retried and surface as Error with their text; code errors outside steps fail the run', async () => {
      let n = 0;
      const wf = workflow('odd-throws', (w) => {
        w.trigger(manual());
        w.run(async ({ step, input }) => {
          const got = await step.do('stringy', { retries: { limit: 3, delay: 10, jitter: false } }, () => {
            n++;
            if (n < 3) throw 'plain string failure';
            return n;
          });
          if (input.explode) throw new RangeError('bad arithmetic');
          return got;
        });
      });
      const { engine } = await boot([wf]);
      const ok = await engine.result((await engine.trigger('odd-throws', { explode: false })).runId, { timeout: '20s' });
      expect(ok.output).toBe(3);
      expect(ok.steps.find((s) => s.name === 'stringy')?.attempts).toBe(3);
      const bad = await engine.result((await engine.trigger('odd-throws', { explode: true })).runId, { timeout: '20s' });
      expect(bad.status).toBe('failed');
      expect(bad.error).toEqual({ name: 'RangeError', message: 'bad arithmetic' });
    });

    test('bad engine calls get one clear error each', async () => {
      const wf = workflow('plain', (w) => {
        w.trigger(manual());
        w.run(async () => 'ok');
      });
      const { engine } = await boot([wf]);
      await expect(engine.trigger('nope', {})).rejects.toThrow("unknown workflow 'nope'");
      await expect(engine.trigger('plain', { n: () => 1 })).rejects.toThrow("input of trigger('plain') at .n: function n is not storable; return plain data");
      await expect(engine.runs.get('missing-run')).rejects.toThrow("unknown run 'missing-run'");
      await expect(engine.result('missing-run')).rejects.toThrow("unknown run 'missing-run'");
      await expect(engine.trigger('plain', {}, { runId: '' })).rejects.toThrow(/runId/);
    });

    triggerScenarios({ test, boot, restart, until });
    concurrencyScenarios({ test, boot, restart, until });
    retryScenarios({ test, boot, restart, until });
    fieldsScenarios({ test, boot, restart, until }, target.backend ?? target.name);
    cliScenarios({ test, boot, until }, target.backend ?? target.name);
    signalScenarios({ test, boot, restart, until });
    signalOrderScenarios({ test, boot, restart, until });
    capabilityScenarios({ test, boot, restart, until });
    valueScenarios({ test, boot, restart, until });
    schemaScenarios({ test, boot, restart, until });
    capabilityRetryScenarios({ test, boot });
    whyScenarios({ test, boot, restart, until });
    queueScenarios({ test, boot, restart, until });
    runQueueScenarios({ test, boot, restart, until });
    debounceScenarios({ test, boot, restart, until });
    debounceTriggerScenarios({ test, boot, restart, until });
    runFlowScenarios({ test, boot, restart, until });
    whyAskerScenarios({ test, boot, until });
    notificationScenarios({ test, boot, restart, until });
    listTimeScenarios({ test, boot });
    cancelScenarios({ test, boot, restart, until }, target.backend ?? target.name);
    plainScenarios({ test, boot, restart, until });
    codecScenarios({ test, boot, restart, until }, target.backend ?? target.name);
    ownResultScenarios({ test, boot, restart, until });
    childScenarios({ test, boot, restart, until }, target.backend ?? target.name);
    peerPortScenarios({ test, boot, restart, until });
    childHandleScenarios({ test, boot, restart, until });
    controlScenarios({ test, boot, restart, until });
    forkScenarios({ test, boot, restart, until });
    workflowPauseScenarios({ test, boot, restart, until });
    liveOutputScenarios({ test, boot, restart, until }, target.backend ?? target.name);
  });
}
