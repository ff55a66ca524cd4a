// `tranquil dev` driven as a user would: a project linked to this checkout, a run sleeping,
// then edits to its workflow file. The edit that inserts a step before the sleep is reported
// with the run and the step where it diverges, and that run alone is held: a run of another
// workflow in flight at the edit goes on when signalled, and a new run gets the new code,
// both while it is held; undoing the edit reloads and the held run resumes and succeeds. A
// second diverging edit, answered `k`, keeps the old code for the held run (its result is the
// old code's) while a new run gets the new code.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const BIN = join(REPO, 'bin/tranquil.mjs');
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

    child = spawn(process.execPath, [BIN, 'dev', '--json', '--no-panel'], { cwd: dir, env: { ...process.env, TRANQUIL_BACKEND: 'sqlite' }, stdio: ['pipe', 'pipe', 'pipe'] });
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
    const cli = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args, '--json'], { cwd: dir, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { runId: string; status: string; output?: unknown };
    };
    const run = (nap: string) => cli('run', 'nap', '--input', JSON.stringify({ nap }));

    await next((l) => l.event === 'ready', 'ready');
    const ticking = cli('run', 'tick'); // first: it waits for a signal, so no clock runs against it
    expect(ticking.status).toBe('waiting');
    // Sleeps long enough that a reload on a loaded machine still finds it in flight.
    const firstAt = Date.now();
    const first = run('10s');
    expect(first.status).toBe('sleeping');

    // The edit: a step inserted before the sleep the run is in.
    let mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), EDITED);
    const diverging = await next((l) => l.event === 'diverging', 'diverging report', mark);
    expect(diverging.runs).toEqual([expect.objectContaining({ runId: first.runId, workflow: 'nap', position: 1, expected: "do 'extra'", recorded: "sleep 'nap'" })]);

    // Held: nothing of the run moves while the user decides (its sleep comes due meanwhile),
    // while the rest of the engine runs: the other workflow's run, signalled, ends, and a new
    // run of the edited workflow runs the new code.
    cli('signal', ticking.runId, 'go', '--data', '7');
    await next((l) => l.event === 'run.succeeded' && l.runId === ticking.runId, 'the other run succeeding while one is held', mark);
    const during = run('1ms');
    await next((l) => l.event === 'run.succeeded' && l.runId === during.runId, 'a new run succeeding while one is held', mark);
    await new Promise((r) => setTimeout(r, Math.max(0, firstAt + 11_000 - Date.now())));
    expect(lines.slice(mark).filter((l) => l.runId === first.runId)).toEqual([]);

    // Undo the edit: reloaded, the run resumes on the code it started with and succeeds.
    mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), WF);
    await next((l) => l.event === 'reloaded', 'reload after the undo', mark);
    await next((l) => l.event === 'run.succeeded' && l.runId === first.runId, 'the first run succeeding', mark);

    // Another run, the same edit, answered k: the held run keeps the old code, new runs get the new.
    const second = run('10s');
    expect(second.status).toBe('sleeping');
    mark = lines.length;
    writeFileSync(join(dir, 'wf.ts'), EDITED);
    const again = await next((l) => l.event === 'diverging', 'second diverging report', mark);
    expect((again.runs as { runId: string }[]).map((r) => r.runId)).toEqual([second.runId]);
    child.stdin!.write('k\n');
    await next((l) => l.event === 'reloaded', 'reload after k', mark);
    await next((l) => l.event === 'run.succeeded' && l.runId === second.runId, 'the kept run succeeding', mark);
    const third = run('1ms');
    await next((l) => l.event === 'run.succeeded' && l.runId === third.runId, 'the new run succeeding', mark);
    // One CLI call for every run's end (a spawn is slow on a loaded machine).
    const runs = new Map((cli('runs', 'list') as unknown as { runId: string; status: string; output?: unknown }[]).map((r) => [r.runId, r]));
    expect(runs.get(second.runId)).toMatchObject({ status: 'succeeded', output: 2 });
    expect(runs.get(third.runId)).toMatchObject({ status: 'succeeded', output: 101 });
    expect(runs.get(during.runId)).toMatchObject({ status: 'succeeded', output: 101 });
    expect(runs.get(ticking.runId)).toMatchObject({ status: 'succeeded', output: 7 });
    expect(readFileSync(join(dir, 'wf.ts'), 'utf8')).toBe(EDITED);

    child.kill('SIGINT');
    await next((l) => l.event === 'stopped', 'stopped');
  }, 420_000); // eight CLI processes: 276 s measured at load 11 on 2 cores, far less idle
});
