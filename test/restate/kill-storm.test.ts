// Restate backend, the reliability slice: the engine process is SIGKILLed at random moments
// with runs in flight (and every third time restate-server too), restarted on the same data
// dir, repeatedly. Afterwards every run succeeded, the workflow saw exactly the recorded step
// results, each came from a real attempt, and every attempt of a step had the same key.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { RunView } from '@tranquil/engine';

const KILLS = Number(process.env.RESTATE_KILLS ?? 6);
const RUNS = 4;
const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-storm-'));
const dataDir = join(dir, 'data');
const log = join(dir, 'attempts.log');
const children = new Set<ChildProcess>();
const serverPid = () => {
  const f = join(dataDir, 'restate', 'server.pid');
  return existsSync(f) ? Number(readFileSync(f, 'utf8')) : undefined;
};
const kill = (pid: number | undefined) => {
  try {
    if (pid) process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
};

afterAll(() => {
  for (const c of children) kill(c.pid);
  kill(serverPid()); // started by a child we killed: stop it by the PID it recorded
  rmSync(dir, { recursive: true, force: true });
});

function child(gen: number, prevReady: boolean, views?: string) {
  const c = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'crash', 'crash-child.ts')], {
    env: { ...process.env, BACKEND: 'restate', DATA_DIR: dataDir, LOG: log, RUNS: String(RUNS), GEN: String(gen), PREV_READY: prevReady ? '1' : '0', ...(views ? { VIEWS: views } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(c);
  let out = '';
  const ready = new Promise<boolean>((resolve) => {
    c.stdout!.on('data', (d) => ((out += String(d)), out.includes('READY') && resolve(true)));
    c.once('exit', () => resolve(out.includes('READY')));
  });
  const exited = new Promise<boolean>((resolve) => c.once('exit', () => (children.delete(c), resolve(out.includes('ALL_DONE')))));
  return { c, ready, exited };
}

it(`runs on Restate survive ${KILLS} SIGKILLs of the engine (and some of restate-server) with runs in flight`, async () => {
  let serverKills = 0;
  let prevReady = true;
  for (let k = 0; k < KILLS; k++) {
    const { c, ready, exited } = child(k, prevReady);
    prevReady = await ready;
    await new Promise((r) => setTimeout(r, 10 + Math.random() * 150));
    kill(c.pid);
    if (k % 3 === 2) {
      kill(serverPid());
      serverKills++;
    }
    await exited;
  }
  const viewsFile = join(dir, 'views.json');
  const last = child(KILLS, prevReady, viewsFile);
  expect(await last.exited).toBe(true);

  const views = JSON.parse(readFileSync(viewsFile, 'utf8')) as RunView[];
  const attempts = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { runId: string; step: string; key: string; result: string });
  expect(views).toHaveLength(RUNS * (KILLS + 1));
  for (const v of views) {
    expect(v.status, `run ${v.runId}`).toBe('succeeded');
    const out = v.output as Record<string, string>;
    for (const name of ['a', 'b', 'c']) {
      const rec = v.steps.find((s) => s.name === name)!;
      expect(rec.status).toBe('succeeded');
      expect(out[name]).toBe(rec.result);
      const mine = attempts.filter((a) => a.runId === v.runId && a.step === name);
      expect(mine.map((a) => a.result)).toContain(out[name]);
      expect(new Set(mine.map((a) => a.key))).toEqual(new Set([`${v.runId}/${name}`]));
    }
  }
  const reexecuted = attempts.length - views.length * 4; // 3 steps + b's scripted first failure
  console.log(`restate kill storm: ${KILLS} engine SIGKILLs, ${serverKills} restate-server SIGKILLs, ${attempts.length} step attempts (${reexecuted} re-executions after a kill), ${views.length} runs all succeeded`);
}, 240_000);
