// SIGKILL storm: the engine runs in a child process that is killed with SIGKILL again and
// again (KILL_STORM kills in total, default 200, over two lanes = two data dirs in
// parallel), at random moments: half while it starts up and recovers, half with runs in
// flight after its triggers were acknowledged. Then one child per lane runs to the end.
// Afterwards: every acknowledged run and event is in the file, every run succeeded, each
// step result came from a real attempt and is what the workflow returned, every attempt of
// a step carried the same idempotency key, each emitted event exists once, and SQLite's
// integrity_check passes.
//
// The child is bundled from source once (test/child-bundle.ts) so a start costs ~0.15 s
// instead of ~0.6 s through the tsx loader; it still runs the repo's source.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { childEntry, type ChildEntry } from '../child-bundle.ts';

const KILLS = Number(process.env.KILL_STORM ?? 200);
const LANES = 2;
const RUNS = 3;
const dir = mkdtempSync(join(tmpdir(), 'tranquil-storm-'));
let killChild: ChildEntry;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  killChild = await childEntry(join(import.meta.dirname, 'kill-child.ts'));
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  killChild?.remove();
});

function spawnChild(lane: number, gen: number, finish: boolean) {
  const env: NodeJS.ProcessEnv = {
    ...process.env, NODE_EXTRA_CA_CERTS: '', DATA_DIR: join(dir, `lane${lane}`), LOG: join(dir, `lane${lane}.log`),
    RUNS: String(RUNS), GEN: String(gen), FINISH: finish ? '1' : '0',
  };
  const child = spawn(process.execPath, killChild.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<{ out: string; err: string; signal: NodeJS.Signals | null }>((resolve) => {
    child.stdout!.on('data', (d) => {
      out += String(d);
      if (out.includes('READY')) onReady();
    });
    child.on('exit', (_code, signal) => {
      children.delete(child);
      onReady();
      resolve({ out, err, signal });
    });
  });
  return { child, ready, exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function lane(lane: number, kills: number): Promise<{ kills: number; early: number; problems: string[] }> {
  let killed = 0;
  let early = 0;
  const problems: string[] = [];
  for (let gen = 0; gen < kills; gen++) {
    const { child, ready, exited } = spawnChild(lane, gen, false);
    if (Math.random() < 0.5) {
      await sleep(Math.random() * 250); // start-up, recovery, first triggers
      early++;
    } else {
      await ready;
      await sleep(Math.random() * 40); // runs in flight
    }
    if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
    const r = await exited;
    if (r.signal === 'SIGKILL') killed++;
    // Anything on stderr other than a refused start is a problem (a crash, a corrupt file).
    if (r.err.trim()) problems.push(`gen ${gen}: ${r.err.trim().split('\n')[0]}`);
  }
  const last = spawnChild(lane, kills, true);
  const end = await Promise.race([last.exited, sleep(60_000).then(() => undefined)]);
  if (!end || !end.out.includes('ALL_DONE')) problems.push(`final child did not finish: ${end?.err ?? 'timeout'}`);
  return { kills: killed, early, problems };
}

function verify(lane: number): { runs: number; attempts: number } {
  const db = new Database(join(dir, `lane${lane}`, 'tranquil.db'), { readonly: true });
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  const runs = db.prepare(`SELECT run_id, status, output FROM runs`).all() as { run_id: string; status: string; output: string | null }[];
  const steps = db.prepare(`SELECT run_id, name, status, result FROM steps WHERE kind = 'do'`).all() as { run_id: string; name: string; status: string; result: string }[];
  const events = db.prepare(`SELECT id, run_ids FROM events`).all() as { id: string; run_ids: string }[];
  db.close();
  const lines = existsSync(join(dir, `lane${lane}.log`))
    ? readFileSync(join(dir, `lane${lane}.log`), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>)
    : [];
  const attempts = lines.filter((l) => l.step);
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  for (const a of lines.filter((l) => l.acked === 'run')) expect(byId.has(a.runId), `acknowledged run ${a.runId}`).toBe(true);
  for (const a of lines.filter((l) => l.acked === 'event')) {
    const row = events.find((e) => e.id === a.id);
    expect(row, `acknowledged event ${a.id}`).toBeDefined();
    expect(JSON.parse(row!.run_ids)).toEqual(a.runIds);
  }
  const eventRuns = new Map<string, string>();
  for (const e of events) {
    for (const id of JSON.parse(e.run_ids) as string[]) {
      expect(eventRuns.has(id), `run ${id} started by two events`).toBe(false);
      eventRuns.set(id, e.id);
    }
  }
  for (const r of runs) {
    expect(r.status, `run ${r.run_id}`).toBe('succeeded');
    const out = JSON.parse(r.output!) as Record<string, string>;
    for (const name of ['a', 'b', 'c']) {
      const rec = steps.find((s) => s.run_id === r.run_id && s.name === name)!;
      expect(rec.status).toBe('succeeded');
      expect(out[name]).toBe(JSON.parse(rec.result));
      const mine = attempts.filter((a) => a.runId === r.run_id && a.step === name);
      expect(mine.map((a) => a.result), `${r.run_id}/${name} result from a real attempt`).toContain(out[name]);
      expect(new Set(mine.map((a) => a.key))).toEqual(new Set([`${r.run_id}/${name}`]));
    }
    expect(events.filter((e) => e.id === `${r.run_id}/emit:storm.done`), `storm.done of ${r.run_id}`).toHaveLength(1);
  }
  return { runs: runs.length, attempts: attempts.length };
}

it(`survives ${KILLS} SIGKILLs (start-up, recovery and runs in flight) without losing or duplicating anything`, async () => {
  const began = Date.now();
  const results = await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i, Math.ceil(KILLS / LANES))));
  for (const r of results) expect(r.problems).toEqual([]);
  const totals = Array.from({ length: LANES }, (_, i) => verify(i));
  const kills = results.reduce((n, r) => n + r.kills, 0);
  expect(kills).toBeGreaterThanOrEqual(Math.floor(KILLS * 0.9)); // a child that finished first was not killed
  console.log(
    `sigkill storm: ${kills} SIGKILLs (${results.reduce((n, r) => n + r.early, 0)} during start-up/recovery), ` +
      `${totals.reduce((n, t) => n + t.runs, 0)} runs all succeeded, ${totals.reduce((n, t) => n + t.attempts, 0)} step attempts, ` +
      `${Math.round((Date.now() - began) / 1000)}s`,
  );
}, 400_000);
