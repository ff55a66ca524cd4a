// `tranquil dev` driven as a user would: a project linked to this checkout, a run sleeping,
// then edits to its workflow file. The edit that inserts a step before the sleep is reported
// with the run and the step where it diverges, and that run alone is held: a run of another
// workflow in flight at the edit goes on when signalled, and a new run gets the new code,
// both while it is held; the Runs panel says the same (the run, the step, held); undoing the
// edit reloads and the held run resumes and succeeds. A second diverging edit, answered in the
// panel with "keep the old code", keeps it for the held run (its result is the old code's)
// while a new run gets the new code. A third, under a run waiting for a signal, answered `f`
// in the terminal, lets that run replay the new code and fail.
// The test talks to dev's engine through its control channel in-process (attach(), what
// `tranquil run/signal` do), so the only process it spawns is `tranquil dev` itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { attach, type RunView } from '@tranquil/engine';
import { tranquilCli } from '../cli-bin.ts';

const REPO = resolve(import.meta.dirname, '../..');
const BIN = tranquilCli();
const dir = mkdtempSync(join(tmpdir(), 'tranquil-dev-'));
const WF = `import { workflow, manual } from '@tranquil/sdk';
export const nap = workflow('nap', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => 1);
    await step.sleep('nap', input.nap);
    return step.do('b', () => a + 1);
  });
});
export const tick = workflow('tick', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const n = await step.waitForEvent('go');
    return step.do('done', () => n);
  });
});
`;
const EDITED_TICK = (src: string) => src.replace("const n = await step.waitForEvent('go');", "await step.do('pre', () => 0);\n    const n = await step.waitForEvent('go');");
const EDITED = WF.replace("const a = await step.do('a', () => 1);", "const a = await step.do('a', () => 1);\n    await step.do('extra', () => 0);").replace('a + 1', 'a + 100');

type Line = Record<string, unknown> & { event?: string };
let child: ChildProcess | undefined;
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGINT');
    await new Promise((r) => child!.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('tranquil dev', () => {
  it('reports the run and step an edit would diverge from, holds it, and resumes it when the edit is undone or the old code kept', async () => {
    mkdirSync(join(dir, 'node_modules', '@tranquil'), { recursive: true });
    symlinkSync(REPO, join(dir, 'node_modules', '@tranquil', 'engine'));
    symlinkSync(join(REPO, 'sdk'), join(dir, 'node_modules', '@tranquil', 'sdk'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'dev', private: true, type: 'module' }));
    writeFileSync(join(dir, 'wf.ts'), WF);
    writeFileSync(join(dir, 'tranquil.config.ts'), "import { nap, tick } from './wf.ts';\nexport default { workflows: [nap, tick] };\n");

    child = spawn(process.execPath, [BIN, 'dev', '--json'], { cwd: dir, env: { ...process.env, TRANQUIL_BACKEND: 'sqlite' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const lines: Line[] = [];
    const waiters: (() => void)[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => {
      lines.push(JSON.parse(l) as Line);
      waiters.splice(0).forEach((w) => w());
    });
    const next = async (pred: (l: Line) => boolean, what: string, from = 0): Promise<Line> => {
      const end = Date.now() + 60_000;
      for (;;) {
        const hit = lines.slice(from).find(pred);
        if (hit) return hit;
        if (Date.now() > end || child!.exitCode !== null) throw new Error(`no ${what} from tranquil dev; saw ${JSON.stringify(lines)}; stderr ${stderr}`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 500); });
      }
    };
    // dev's engine restarts on a reload (a new control port): attach afresh for each call.
    const svc = () => attach({ dataDir: join(dir, '.tranquil') });
    /** Starts a run and waits until it leaves `pending`/`running`, as `tranquil run` does. */
    const start = async (workflow: string, input: unknown = null): Promise<RunView> => {
      const c = await svc();
      const { runId } = await c.trigger(workflow, input);
      for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
        const v = await c.runs.get(runId);
        if (v.status !== 'pending' && v.status !== 'running') return v;
      }
      throw new Error(`run ${runId} did not settle`);
    };
    const run = (nap: string) => start('nap', { nap });
    const text = async (url: string) => (await (await fetch(url)).text()).replaceAll('&#39;', "'");

    const ready = await next((l) => l.event === 'ready', 'ready');
    expect(ready.panel).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const ticking = await start('tick'); // first: it waits for a signal, so no clock runs against it
    expect(ticking.status).toBe('waiting');
    // Sleeps long enough that a reload on a loaded machine still finds it in flight.
    const firstAt = Date.now();
    const first = await run('10s');
    expect(first.status).toBe('sleeping');

    // The edit: a step inserted before the sleep the run is in.
    let mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), EDITED);
    const diverging = await next((l) => l.event === 'diverging', 'diverging report', mark);
    expect(diverging.runs).toEqual([expect.objectContaining({ runId: first.runId, workflow: 'nap', position: 1, expected: "do 'extra'", recorded: "sleep 'nap'" })]);

    // The panel says it too: the list names the held run with its step and marks it held, and
    // so does the run's own page.
    const panel = diverging.panel as string;
    const step = `${first.runId} (nap): run ${first.runId} (nap) at step 1: the code now calls do 'extra', the run recorded sleep 'nap'`;
    const list = await text(panel);
    expect(list).toContain('tranquil dev holds 1 run(s)');
    expect(list.replace(/<[^>]+>/g, '')).toContain(step);
    expect(list.match(/held-badge/g)).toHaveLength(1);
    expect((await text(`${panel}runs/${first.runId}`)).replace(/<[^>]+>/g, '')).toContain(step);

    // Held: nothing of the run moves while the user decides (its sleep comes due meanwhile),
    // while the rest of the engine runs: the other workflow's run, signalled, ends, and a new
    // run of the edited workflow runs the new code.
    await (await svc()).signal(ticking.runId, 'go', 7);
    await next((l) => l.event === 'run.succeeded' && l.runId === ticking.runId, 'the other run succeeding while one is held', mark);
    const during = await run('1ms');
    await next((l) => l.event === 'run.succeeded' && l.runId === during.runId, 'a new run succeeding while one is held', mark);
    await new Promise((r) => setTimeout(r, Math.max(0, firstAt + 11_000 - Date.now())));
    expect(lines.slice(mark).filter((l) => l.runId === first.runId)).toEqual([]);

    // Undo the edit: reloaded, the run resumes on the code it started with and succeeds.
    mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), WF);
    const undone = await next((l) => l.event === 'reloaded', 'reload after the undo', mark);
    await next((l) => l.event === 'run.succeeded' && l.runId === first.runId, 'the first run succeeding', mark);
    expect(await text(undone.panel as string)).not.toContain('id="held"');

    // Another run, the same edit, answered in the panel: keep the old code for the held run;
    // new runs get the new code.
    const second = await run('10s');
    expect(second.status).toBe('sleeping');
    mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), EDITED);
    const again = await next((l) => l.event === 'diverging', 'second diverging report', mark);
    expect((again.runs as { runId: string }[]).map((r) => r.runId)).toEqual([second.runId]);
    const page = await text(`${again.panel}runs/${second.runId}`);
    const token = /action="\/holds\/decide"><input type="hidden" name="_token" value="([\w-]+)"/.exec(page)?.[1];
    expect(token).toBeTruthy();
    const kept = await fetch(`${again.panel}holds/decide`, {
      method: 'POST', redirect: 'manual',
      headers: { origin: new URL(again.panel as string).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _token: token!, answer: 'keep', run: second.runId }),
    });
    expect(kept.status).toBe(303);
    expect(decodeURIComponent(kept.headers.get('location') ?? '')).toContain('kept the old code for 1 run(s)');
    await next((l) => l.event === 'reloaded', 'reload after keep', mark);
    await next((l) => l.event === 'run.succeeded' && l.runId === second.runId, 'the kept run succeeding', mark);
    const third = await run('1ms');
    await next((l) => l.event === 'run.succeeded' && l.runId === third.runId, 'the new run succeeding', mark);

    // A run waiting for a signal, an edit before its wait, answered f in the terminal: the run
    // replays the new code when signalled and fails.
    const waiting = await start('tick');
    expect(waiting.status).toBe('waiting');
    mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), EDITED_TICK(EDITED));
    const third3 = await next((l) => l.event === 'diverging', 'third diverging report', mark);
    expect(third3.runs).toEqual([expect.objectContaining({ runId: waiting.runId, workflow: 'tick', position: 0, expected: "do 'pre'" })]);
    child.stdin!.write('f\n');
    await next((l) => l.event === 'reloaded', 'reload after f', mark);
    await (await svc()).signal(waiting.runId, 'go', 1);
    const failed = await next((l) => l.event === 'run.failed' && l.runId === waiting.runId, 'the let-fail run failing', mark);
    expect(failed.error).toMatchObject({ name: 'NonDeterminismError' });

    const runs = new Map((await (await svc()).runs.list({ limit: 100 })).map((r) => [r.runId, r]));
    expect(runs.get(second.runId)).toMatchObject({ status: 'succeeded', output: 2 });
    expect(runs.get(third.runId)).toMatchObject({ status: 'succeeded', output: 101 });
    expect(runs.get(during.runId)).toMatchObject({ status: 'succeeded', output: 101 });
    expect(runs.get(ticking.runId)).toMatchObject({ status: 'succeeded', output: 7 });
    expect(readFileSync(join(dir, 'wf.ts'), 'utf8')).toBe(EDITED_TICK(EDITED));

    child.kill('SIGINT');
    await next((l) => l.event === 'stopped', 'stopped');
  }, 180_000); // one spawned process (dev) and two 10 s sleeps; the rest is in-process calls
});
