// Conformance scenarios for the CLI's reading commands, called from runConformance(): real
// workflows run through the engine, then `tranquil runs list|describe|why --json` run as a
// child process against the same data dir WHILE the engine runs, and must say exactly what
// the engine API says. On Restate this proves the CLI reads through the backend (admin API),
// not the local file's outbox rows.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { event, manual, TerminalError, workflow } from '@tranquil/sdk';
import type { Explanation, RunView } from '@tranquil/engine';
import type { ScenarioKit } from './triggers.ts';
import { decodeValue } from '../../src/domain/value-codec.ts';
import { tranquilCli } from '../cli-bin.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = tranquilCli();

interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** The CLI in a child process (async: the engine in this process keeps serving meanwhile). */
function cli(backend: string, dataDir: string, ...args: string[]): Promise<CliResult> {
  return cliLive(backend, dataDir, ...args).done;
}

/** cli(), with what it printed so far readable while it runs (a --follow, a --wait). */
function cliLive(backend: string, dataDir: string, ...args: string[]): { done: Promise<CliResult>; out(): string } {
  const env: NodeJS.ProcessEnv = { ...process.env, TRANQUIL_BACKEND: backend };
  delete env.TRANQUIL_DATA_DIR;
  // cwd = the data dir: no tranquil.config.ts there, so only --data-dir and the env decide.
  const child = spawn(process.execPath, [BIN, ...args, '--data-dir', dataDir], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 60_000);
  const done = new Promise<CliResult>((r) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      r({ code: code ?? -1, out: out.trim(), err: err.trim() });
    }),
  );
  return { done, out: () => out };
}

function json<T>(r: CliResult, what: string): T {
  if (r.code !== 0) throw new Error(`${what}: cli exited ${r.code}: ${r.err}`);
  return JSON.parse(r.out) as T;
}

/** Relative times ("in 59m 58s") depend on when each side looked. */
const absolute = (e: Explanation) => ({ ...e, summary: e.summary.replace(/ \((in [^)]*|due now)\)/g, '') });

export function cliScenarios({ test, boot, until }: Pick<ScenarioKit, 'test' | 'boot' | 'until'>, backend: string): void {
  test('cli: runs list --parent, runs describe and why show a parent waiting for its child, as the engine does', async () => {
    const leaf = workflow('cli-leaf', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('release', { timeout: '1h' }));
    });
    const top = workflow('cli-top', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.invoke('kid', leaf, null));
    });
    const { engine, dir } = await boot([leaf, top]);
    await engine.trigger('cli-top', null, { runId: 'T' });
    await until('child waiting', async () => (await engine.runs.get('T:kid').catch(() => undefined))?.status === 'waiting');
    await until('parent waiting', async () => (await engine.runs.get('T')).status === 'waiting');
    // The three read the same still state: at once (each CLI start is seconds of CPU).
    const [listedOut, parentOut, whyOut] = await Promise.all([
      cli(backend, dir, 'runs', 'list', '--parent', 'T', '--json'),
      cli(backend, dir, 'runs', 'describe', 'T', '--json'),
      cli(backend, dir, 'why', 'T', '--json'),
    ]);
    const listed = json<RunView[]>(listedOut, 'runs list --parent');
    expect(listed.map((r) => [r.runId, r.parent?.runId])).toEqual([['T:kid', 'T']]);
    const parent = json<RunView>(parentOut, 'runs describe');
    expect(parent.children).toEqual((await engine.runs.get('T')).children);
    expect(parent.children).toEqual([{ runId: 'T:kid', workflow: 'cli-leaf', step: 'kid', status: 'waiting' }]);
    const why = json<Explanation>(whyOut, 'why');
    expect(why.summary).toContain("is waiting for child run T:kid of 'cli-leaf', which is waiting in step 'release' for signal 'release'");
    expect(why.next).toBe('See the child: `tranquil why T:kid`.');
  }, 120_000);

  const workflows = () => [
    workflow('cli-ok', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const a = await step.do('a', () => input.n + 1);
        const b = await step.do('b', () => a * 2);
        return { sum: a + b };
      });
    }),
    workflow('cli-fails', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('prep', () => 'ready');
        await step.do('boom', () => {
          throw new TerminalError('card declined');
        });
      });
    }),
    workflow('cli-sleeps', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('prep', () => 1);
        await step.sleep('nap', '1h');
      });
    }),
    workflow('cli-waits', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('prep', () => 1);
        return step.waitForEvent('approve');
      });
    }),
  ];

  test('CLI runs list / describe / why say what the engine API says, while the engine runs', async () => {
    const { engine, dir } = await boot(workflows());
    const ok = (await engine.trigger('cli-ok', { n: 1 })).runId;
    const bad = (await engine.trigger('cli-fails', {})).runId;
    const sleeper = (await engine.trigger('cli-sleeps', {})).runId;
    const waiter = (await engine.trigger('cli-waits', {})).runId;
    expect((await engine.result(ok, { timeout: '20s' })).status).toBe('succeeded');
    expect((await engine.result(bad, { timeout: '20s' })).status).toBe('failed');
    await until('run to sleep', async () => (await engine.runs.get(sleeper)).status === 'sleeping', 20_000);
    await until('run to wait', async () => (await engine.runs.get(waiter)).status === 'waiting', 20_000);

    const ids = [ok, bad, sleeper, waiter];
    const described = await Promise.all(ids.map((id) => cli(backend, dir, 'runs', 'describe', id, '--json')));
    const [listedOut, unknown, ...whys] = await Promise.all([
      cli(backend, dir, 'runs', 'list', '--json'),
      cli(backend, dir, 'runs', 'describe', 'no-such-run', '--json'),
      ...ids.map((id) => cli(backend, dir, 'why', id, '--json')),
    ]);
    const listed = json<RunView[]>(listedOut!, 'runs list');

    for (const [i, id] of ids.entries()) {
      const api = await engine.runs.get(id);
      const shown = json<RunView>(described[i]!, `runs describe ${id}`);
      expect(shown.status, `status of ${api.workflow}`).toBe(api.status);
      expect(shown.output).toEqual(api.output);
      expect(shown.error).toEqual(api.error);
      expect(shown.wakeAt).toEqual(api.wakeAt);
      expect(shown.steps.map((s) => [s.name, s.kind, s.status])).toEqual(api.steps.map((s) => [s.name, s.kind, s.status]));
      // The whole view, field for field. updatedAt only for a finished run: on Restate a run
      // parked failed (or suspended) is a live invocation the server still touches.
      const { updatedAt, ...rest } = JSON.parse(JSON.stringify(api)) as RunView;
      expect(shown).toEqual({ ...rest, updatedAt: api.status === 'succeeded' ? updatedAt : shown.updatedAt });
      expect(absolute(json<Explanation>(whys[i]!, `why ${id}`))).toEqual(absolute(JSON.parse(JSON.stringify(await engine.runs.explain(id)))));
    }
    expect(json<RunView>(described[0]!, 'ok').output).toEqual({ sum: 6 });
    expect(json<RunView>(described[0]!, 'ok').steps).toHaveLength(2);
    expect(json<RunView>(described[1]!, 'bad').error).toEqual({ name: 'TerminalError', message: 'card declined' });

    const byId = (vs: RunView[]) => vs.map((v) => ({ runId: v.runId, workflow: v.workflow, status: v.status })).sort((a, b) => a.runId.localeCompare(b.runId));
    expect(byId(listed)).toEqual(byId(await engine.runs.list()));
    expect(listed).toHaveLength(4);

    expect(unknown!.code).toBe(1);
    expect(unknown!.err).toBe("tranquil: UnknownRunError: unknown run 'no-such-run'");
  }, 120_000);

  test('cli: runs list --debounced, why and runs describe show a pending debounce burst (workflow, key, triggers collected, when it starts) before its run exists', async () => {
    const wf = workflow('cli-debounced', { debounce: { period: '1h', key: (input: { user: string }) => input.user } }, (w) => {
      w.trigger(event('cli.edit'));
      w.run(async ({ input }) => input);
    });
    const { engine, dir } = await boot([wf]);
    const started = await engine.trigger('cli-debounced', { user: 'u1', n: 0 });
    for (let n = 1; n < 3; n++) await engine.trigger('cli-debounced', { user: 'u1', n });
    await engine.emit('cli.edit', { user: 'u1', n: 3 }, { id: 'cli-e3' });
    await engine.emit('cli.edit', { user: 'u2', n: 4 }, { id: 'cli-e4' });
    const listed = json<{ runId: string; workflow: string; key: string; count: number; firstAt: string; startsAt: string }[]>(await cli(backend, dir, 'runs', 'list', '--debounced', '--json'), 'runs list --debounced');
    const u1 = listed.find((b) => b.key === 'u1')!;
    expect(listed.map((b) => [b.workflow, b.key, b.count]).sort()).toEqual([['cli-debounced', 'u1', 4], ['cli-debounced', 'u2', 1]]);
    expect(u1.runId).toBe(started.runId);
    // Due a period after its last trigger: within the hour from now.
    expect(Date.parse(u1.startsAt) - Date.now()).toBeGreaterThan(3_500_000);
    expect(Date.parse(u1.startsAt) - Date.now()).toBeLessThanOrEqual(3_600_000);
    const why = await cli(backend, dir, 'why', started.runId);
    expect(why.code).toBe(0);
    expect(why.out).toContain(`Run ${started.runId} has not started: it is the run of a debounce burst of 'cli-debounced' for key 'u1', 4 triggers collected`);
    const described = json<{ runId: string; count: number }>(await cli(backend, dir, 'runs', 'describe', started.runId, '--json'), 'runs describe');
    expect(described).toMatchObject({ runId: started.runId, count: 4 });
    const text = await cli(backend, dir, 'runs', 'list', '--debounced', '--workflow', 'nope');
    expect(text.out).toBe('no debounce bursts collecting');
  }, 90_000);

  test('cli: runs describe and why show a paused run (who paused it, when) as the engine does', async () => {
    const { engine, dir } = await boot(workflows());
    const paused = (await engine.trigger('cli-waits', {})).runId;
    await until('run to wait', async () => (await engine.runs.get(paused)).status === 'waiting', 20_000);
    await engine.runs.pause(paused, { by: 'cli-test' });
    await until('run to pause', async () => (await engine.runs.get(paused)).status === 'paused', 20_000);
    const [described, why] = await Promise.all([cli(backend, dir, 'runs', 'describe', paused, '--json'), cli(backend, dir, 'why', paused, '--json')]);
    const api = await engine.runs.get(paused);
    const { updatedAt: _, ...rest } = JSON.parse(JSON.stringify(api)) as RunView;
    const shown = json<RunView>(described, 'runs describe');
    expect(shown).toEqual({ ...rest, updatedAt: shown.updatedAt });
    expect(shown.paused?.by).toBe('cli-test');
    const said = json<Explanation>(why, 'why');
    expect(said).toEqual(JSON.parse(JSON.stringify(await engine.runs.explain(paused))));
    expect(said.summary).toContain(`is paused by cli-test at ${api.paused!.at}; `);
  }, 120_000);

  test('cli: why of a run held by its workflow\'s pause, and why <workflow>, say the workflow is paused', async () => {
    const wf = workflow('cli-held', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('one', () => 1));
    });
    const { engine, dir } = await boot([wf]);
    const p = await engine.workflows.pause('cli-held', { by: 'cli-test' });
    const held = (await engine.trigger('cli-held', null)).runId;
    await until('run to be held', async () => (await engine.runs.get(held)).status === 'paused', 20_000);
    const [why, whyWf] = await Promise.all([cli(backend, dir, 'why', held, '--json'), cli(backend, dir, 'why', 'cli-held', '--json')]);
    expect(json<Explanation>(why, 'why')).toEqual(JSON.parse(JSON.stringify(await engine.runs.explain(held))));
    const wfSaid = json<{ summary: string; details: string[]; paused: unknown }>(whyWf, 'why <workflow>');
    expect(wfSaid.summary).toBe(`Workflow 'cli-held' is paused by cli-test at ${p.at}: its new runs (events, schedule slots, webhooks, starts) are created and held before their code runs; runs that were executing go on.`);
    expect(wfSaid.paused).toEqual(p);
    await engine.workflows.resume('cli-held');
    expect((await engine.result(held, { timeout: '20s' })).output).toBe(1);
  }, 120_000);

  test('cli: runs describe and why show a fork and its original, linked both ways, as the engine does', async () => {
    const wf = workflow('cli-forkable', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => [await step.do('one', () => 1), await step.do('two', () => 2)]);
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('cli-forkable', null);
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
    const fork = await engine.runs.fork(runId, { from: 'two' });
    expect((await engine.result(fork.runId, { timeout: '20s' })).output).toEqual([1, 2]);
    for (const id of [runId, fork.runId]) {
      const [described, why] = await Promise.all([cli(backend, dir, 'runs', 'describe', id, '--json'), cli(backend, dir, 'why', id, '--json')]);
      expect(json<RunView>(described, 'runs describe')).toEqual(JSON.parse(JSON.stringify(await engine.runs.get(id))));
      expect(json<Explanation>(why, 'why')).toEqual(JSON.parse(JSON.stringify(await engine.runs.explain(id))));
    }
    const [forkText, origText] = await Promise.all([cli(backend, dir, 'runs', 'describe', fork.runId), cli(backend, dir, 'runs', 'describe', runId)]);
    expect(forkText.out).toContain(`  fork of run ${runId} from step 'two' (position 1)`);
    expect(origText.out).toContain(`  rerun or forked as run ${fork.runId}`);
  }, 120_000);

  test('after the engine stops, the CLI reads the file (sqlite) or says no restate-server is running (restate)', async () => {
    const { engine, dir } = await boot(workflows());
    const ok = (await engine.trigger('cli-ok', { n: 2 })).runId;
    const done = await engine.result(ok, { timeout: '20s' });
    await engine.stop();
    const r = await cli(backend, dir, 'runs', 'describe', ok, '--json');
    if (backend === 'restate') {
      expect(r.code).toBe(1);
      expect(r.err).toBe(`tranquil: BackendUnavailableError: restate backend: no restate-server is running for ${dir}; start \`tranquil serve\` or the app`);
    } else {
      expect(json<RunView>(r, 'runs describe')).toEqual(JSON.parse(JSON.stringify(done)));
    }
  }, 60_000);

  test('cli: runs describe shows values readably (a Map as its entries, a Date as ISO, a BigInt as 10n); --json keeps the stored form, lossless', async () => {
    const wf = workflow('cli-values', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('make', () => ({ lines: new Map([['sku-1', 2]]), at: new Date(0), total: 10n, seen: input })));
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('cli-values', { plain: [1, 'a'] });
    expect((await engine.result(runId, { timeout: '20s' })).status).toBe('succeeded');
    const [human, machine] = await Promise.all([cli(backend, dir, 'runs', 'describe', runId), cli(backend, dir, 'runs', 'describe', runId, '--json')]);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toContain('\n  input {"plain":[1,"a"]}\n');
    expect(human.out).toContain('\n  output {"lines":Map(1) {"sku-1" => 2},"at":1970-01-01T00:00:00.000Z,"total":10n,"seen":{"plain":[1,"a"]}}\n');
    const stored = json<RunView>(machine, 'runs describe --json');
    expect(stored.output).toEqual((await engine.runs.get(runId)).output);
    expect(stored.output).toHaveProperty('$tqv');
    expect(decodeValue(stored.output)).toEqual({ lines: new Map([['sku-1', 2]]), at: new Date(0), total: 10n, seen: { plain: [1, 'a'] } });
  }, 60_000);
  test('cli: runs state reads a live run\'s published state as the engine does (--json: the stored form); a key never published exits 1', async () => {
    const wf = workflow('cli-state', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        await ctx.publish('progress', { done: 1 });
        await ctx.publish('progress', { done: 2 });
        await ctx.publish('at', new Map([['t', new Date(0)]]));
        return step.waitForEvent('go', { timeout: '1h' });
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('cli-state', null);
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    // Two processes only: each CLI start is seconds on a loaded machine.
    const [all, none] = await Promise.all([
      cli(backend, dir, 'runs', 'state', runId, '--json'),
      cli(backend, dir, 'runs', 'state', runId, 'nope'),
    ]);
    const stored = json<{ key: string; value: unknown; step: string }[]>(all, 'runs state --json');
    expect(stored.map((p) => [p.key, p.step])).toEqual([['progress', 'publish:progress#2'], ['at', 'publish:at']]);
    expect(stored.map((p) => decodeValue(p.value as never))).toEqual((await engine.runs.published(runId)).map((p) => p.value));
    expect(none.code).toBe(1);
    expect(none.out).toBe(`run ${runId} published no state under 'nope'`);
    await engine.runs.cancel(runId);
  }, 120_000);

  test('cli: runs stream prints chunks from --from and --follow follows live until the close; runs state --wait waits for a key; bad stream, offset, duration, run: one line each', async () => {
    const wf = workflow('cli-stream', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const out = ctx.stream('tokens');
        await out.write('Hel');
        await out.write('lo');
        await out.write({ at: new Date(0) });
        await step.waitForEvent('more', { timeout: '1h' });
        await ctx.publish('phase', 'second');
        await out.write(' world');
        await out.close();
        return 'done';
      });
    });
    const { engine, dir } = await boot([wf]);
    const { runId } = await engine.trigger('cli-stream', null);
    await until('the run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    // Three processes at a time: each CLI start is seconds on a loaded machine.
    const [now, json, timedOut] = await Promise.all([
      cli(backend, dir, 'runs', 'stream', runId, 'tokens'),
      cli(backend, dir, 'runs', 'stream', runId, 'tokens', '--from', '1', '--json'),
      cli(backend, dir, 'runs', 'state', runId, 'phase', '--wait', '300ms'),
    ]);
    expect(now.code, now.err).toBe(0);
    expect(now.out).toBe('Hello{"at":1970-01-01T00:00:00.000Z}');
    const lines = json.out.split('\n').map((l) => JSON.parse(l) as { offset: number; chunk: unknown });
    expect(lines.map((l) => l.offset)).toEqual([1, 2]);
    expect(lines.map((l) => decodeValue(l.chunk as never))).toEqual(['lo', { at: new Date(0) }]);
    expect(timedOut.code).toBe(1);
    expect(timedOut.err).toBe(`tranquil: TimeoutError: run ${runId} published no 'phase' within 300ms`);

    // A follower and a waiter started while the run waits: they get what comes after.
    const follow = cliLive(backend, dir, 'runs', 'stream', runId, 'tokens', '--follow', '--from', '1');
    const wait = cliLive(backend, dir, 'runs', 'state', runId, 'phase', '--wait', '60s', '--json');
    await until('the follower to print what is there', () => follow.out().includes('1970'), 60_000);
    await engine.signal(runId, 'more', null);
    const [followed, waited] = await Promise.all([follow.done, wait.done]);
    expect(followed.code, followed.err).toBe(0);
    expect(followed.out).toBe('lo{"at":1970-01-01T00:00:00.000Z}\n world');
    expect(waited.code, waited.err).toBe(0);
    expect(JSON.parse(waited.out)).toMatchObject({ key: 'phase', value: 'second', step: 'publish:phase' });
    expect((await engine.result(runId, { timeout: '20s' })).output).toBe('done');

    const errs = async (...calls: string[][]) => (await Promise.all(calls.map((a) => cli(backend, dir, ...a)))).map((r) => [r.code, r.err || r.out]);
    expect(await errs(
      ['runs', 'stream', runId, 'nope', '--follow'],
      ['runs', 'stream', runId, 'tokens', '--from', '5'],
      ['runs', 'stream', runId, 'tokens', '--from', '-1'],
    )).toEqual([
      [1, `tranquil: ValidationError: run ${runId} wrote no stream 'nope' (its streams: 'tokens')`],
      [1, `tranquil: ValidationError: --from: 5 is past the end of stream 'tokens' of run ${runId} (4 chunks, closed)`],
      [1, 'tranquil: ValidationError: --from: expected an offset: a whole number from 0'],
    ]);
    expect(await errs(
      ['runs', 'state', runId, 'phase', '--wait', '3 parsecs'],
      ['runs', 'state', 'no-such-run', 'phase', '--wait', '1s'],
      ['runs', 'state', runId, 'never', '--wait', '1m'],
    )).toEqual([
      [1, "tranquil: ValidationError: --wait: '3 parsecs' is not a duration (use e.g. '30s', '15m', '48h', '7d')"],
      [1, "tranquil: UnknownRunError: unknown run 'no-such-run'"],
      // The run ended without the key: nothing can come, answered at once.
      [1, `run ${runId} published no state under 'never' (it succeeded)`],
    ]);
  }, 180_000);
}
