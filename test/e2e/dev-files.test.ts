// `tranquil dev --workflows <dir>` with a workflow FILE (a real Deno child): the file is
// approved in the Runs panel, a run of it sleeps, the file is edited; dev reloads, and the
// sleeping run resumes the snapshot of the code it started with (so an edit cannot diverge
// from it and nothing is held), while a new run executes the edit. Runs are started and read
// in-process through dev's control channel (attach()); the only process spawned is dev.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { attach, type RunView } from '@tranquil/engine';
import { tranquilCli } from '../cli-bin.ts';

const BIN = tranquilCli();
const dir = mkdtempSync(join(tmpdir(), 'tranquil-dev-files-'));
const source = (tag: string) => `import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-nap', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => '${tag}');
    await step.sleep('pause', (input as { ms: number }).ms);
    return [a, await step.do('b', () => '${tag}')];
  });
});
`;

type Line = Record<string, unknown> & { event?: string };
let child: ChildProcess | undefined;
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGINT');
    await new Promise((r) => child!.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('tranquil dev --workflows', () => {
  it('an edited workflow file reloads; its sleeping run resumes the code it started with, a new run gets the edit', async () => {
    mkdirSync(join(dir, 'flows'));
    writeFileSync(join(dir, 'flows', 'nap.ts'), source('v1'));
    child = spawn(process.execPath, [BIN, 'dev', '--workflows', 'flows', '--json'], { cwd: dir, env: { ...process.env, TRANQUIL_BACKEND: 'sqlite' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const lines: Line[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => lines.push(JSON.parse(l) as Line));
    const next = async (pred: (l: Line) => boolean, what: string, from = 0): Promise<Line> => {
      for (const end = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 100))) {
        const hit = lines.slice(from).find(pred);
        if (hit) return hit;
        if (Date.now() > end || child!.exitCode !== null) throw new Error(`no ${what} from tranquil dev; saw ${JSON.stringify(lines)}; stderr ${stderr}`);
      }
    };
    const svc = () => attach({ dataDir: join(dir, '.tranquil') });
    const until = async (runId: string, status: string): Promise<RunView> => {
      for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
        const v = await (await svc()).runs.get(runId);
        if (v.status === status) return v;
      }
      throw new Error(`run ${runId} never ${status}`);
    };

    const ready = await next((l) => l.event === 'ready', 'ready');
    const panel = ready.panel as string;
    // Nothing runs before the file's declaration is approved: the run is created blocked, and
    // the user approves it on the run's page in the panel.
    const old = (await (await svc()).trigger('file-nap', { ms: 15_000 })).runId;
    await until(old, 'blocked');
    const page = await (await fetch(`${panel}runs/${old}`)).text();
    const form = /action="\/workflows\/file-nap\/approve"><input type="hidden" name="_token" value="([\w-]+)"><input type="hidden" name="run" value="[^"]+"><input type="hidden" name="hash" value="(\w+)">/.exec(page);
    expect(form, 'the approve form on the blocked run page').toBeTruthy();
    const approved = await fetch(`${panel}workflows/file-nap/approve`, {
      method: 'POST', redirect: 'manual',
      headers: { origin: new URL(panel).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _token: form![1]!, run: old, hash: form![2]! }),
    });
    expect(approved.status).toBe(303);
    await until(old, 'sleeping');

    // The edit (same declaration: no new approval): reloaded, nothing to hold.
    const mark = lines.length;
    writeFileSync(join(dir, 'flows', 'nap.ts'), source('v2'));
    await next((l) => l.event === 'reloaded', 'reload after the edit', mark);
    expect(lines.slice(mark).some((l) => l.event === 'diverging')).toBe(false);
    // Still asleep across the reload (the sleep is long enough for a loaded machine's reload):
    // what follows is the resume, not a run that ended before the edit.
    expect((await (await svc()).runs.get(old)).status).toBe('sleeping');
    const fresh = (await (await svc()).trigger('file-nap', { ms: 0 })).runId;
    const [oldView, freshView] = await Promise.all([until(old, 'succeeded'), until(fresh, 'succeeded')]);
    expect(oldView.output).toEqual(['v1', 'v1']);
    expect(freshView.output).toEqual(['v2', 'v2']);
    expect(freshView.version).not.toBe(oldView.version);

    child.kill('SIGINT');
    await next((l) => l.event === 'stopped', 'stopped');
  }, 180_000);
});
