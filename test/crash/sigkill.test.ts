// A real crash test: the engine runs in a child process that is SIGKILLed at random points
// while runs are in flight, then restarted on the same file, repeatedly. Afterwards every
// run is terminal, the workflow saw exactly the recorded step results, and every attempt
// of a step carried the same idempotency key.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { childEntry, type ChildEntry } from '../child-bundle.ts';

const KILLS = Number(process.env.CRASH_KILLS ?? 25);
const RUNS = 8;
const dir = mkdtempSync(join(tmpdir(), 'tranquil-crash-'));
const log = join(dir, 'attempts.log');
const children = new Set<ChildProcess>();
let crashChild: ChildEntry;

// The child runs from a bundle of the sources, built once here (test/child-bundle.ts).
beforeAll(async () => {
  crashChild = await childEntry(join(import.meta.dirname, 'crash-child.ts'));
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  crashChild?.remove();
});

function startChild(gen: number): { child: ChildProcess; ready: Promise<void>; done: Promise<boolean> } {
  const child = spawn(process.execPath, crashChild.args, {
    env: { ...process.env, DATA_DIR: join(dir, 'data'), LOG: log, RUNS: String(RUNS), GEN: String(gen) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  let out = '';
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const done = new Promise<boolean>((resolve) => {
    child.stdout!.on('data', (d) => {
      out += String(d);
      if (out.includes('READY')) onReady();
    });
    child.on('exit', () => {
      children.delete(child);
      onReady();
      resolve(out.includes('ALL_DONE'));
    });
  });
  return { child, ready, done };
}

it(`survives ${KILLS} SIGKILLs with runs in flight`, async () => {
  let finishedEarly = 0;
  for (let k = 0; k < KILLS; k++) {
    const { child, ready, done } = startChild(k);
    await ready;
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 120));
    if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL');
    if (await done) finishedEarly++;
  }
  const last = startChild(KILLS);
  expect(await last.done).toBe(true);

  const db = new Database(join(dir, 'data', 'tranquil.db'), { readonly: true });
  const runs = db.prepare(`SELECT run_id, status, output FROM runs`).all() as { run_id: string; status: string; output: string }[];
  const steps = db.prepare(`SELECT run_id, name, status, result FROM steps WHERE kind = 'do'`).all() as { run_id: string; name: string; status: string; result: string }[];
  db.close();
  const attempts = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { runId: string; step: string; key: string; attempt: number; result: string });

  expect(runs).toHaveLength(RUNS * (KILLS + 1));
  for (const r of runs) {
    expect(r.status, `run ${r.run_id}`).toBe('succeeded');
    const out = JSON.parse(r.output) as Record<string, string>;
    for (const name of ['a', 'b', 'c']) {
      const rec = steps.find((s) => s.run_id === r.run_id && s.name === name)!;
      expect(rec.status).toBe('succeeded');
      // The workflow saw the recorded result, and that result came from a real attempt.
      expect(out[name]).toBe(JSON.parse(rec.result));
      const mine = attempts.filter((a) => a.runId === r.run_id && a.step === name);
      expect(mine.map((a) => a.result)).toContain(out[name]);
      expect(new Set(mine.map((a) => a.key))).toEqual(new Set([`${r.run_id}/${name}`]));
    }
  }
  console.log(`crash test: ${KILLS} SIGKILLs (${finishedEarly} children finished before their kill), ${attempts.length} step attempts, ${runs.length} runs all succeeded`);
}, 240_000);
