// Child of bench/lib/citizen.ts: one measurement per process, argv[2] = JSON args, prints one
// JSON line. TRANQUIL_FSYNC (env) picks where the commit's fsync runs (inline / thread pool).
// Runs from the sources (node --import tsx bench/child-citizen.ts) or, for `lag` and `start`, from the
// production build (node bench/.build/child-citizen.js, bundled by scripts/build.mjs --bench).
//   lag:    100 concurrent clients x 10-step runs at durability 'full'; the host's event-loop
//           delay (monitorEventLoopDelay, 1 ms resolution), journaled steps/s, the main
//           thread's CPU time per step (/proc/self/task/<pid>/stat: steadier than steps/s on a
//           noisy machine, and what a writer thread would have to cut) and the scavenges
//           (minor GCs, each a pause of the loop) while they run. Each client checks a run's
//           view and drops it; with `holdViews` it keeps it in its loop's frame until its next
//           run ends (`const v = await ...` in a loop: V8 keeps the last value in the async
//           frame), the harness's own garbage that survives scavenges
//   fill:   a data dir with `runs` finished runs (one step each), then SIGKILL after one more
//           run (start after a crash)
//   start:  createEngine + start() on that data dir, timed
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { ALL_WORKFLOWS, STEP_RESULT, STEPS_PER_RUN, tenSteps } from './lib/workflows.ts';

const args = JSON.parse(process.argv[2]!) as { mode: 'lag' | 'fill' | 'start'; dataDir: string; runs?: number; conc?: number; warmRuns?: number; holdViews?: boolean };
const open = async () => {
  const e = await createEngine({ dataDir: args.dataDir, workflows: ALL_WORKFLOWS, durability: 'full', maxConcurrentRuns: 1000 });
  await e.start();
  return e;
};
const ns = (n: number) => n / 1e6;

if (args.mode === 'lag') {
  const engine = await open();
  const loop = async (runs: number, conc: number) => {
    let next = 0;
    const check = (v: { status: string }) => {
      if (v.status !== 'succeeded') throw new Error(`run ended ${v.status}`);
    };
    const client = async () => {
      while (next++ < runs) {
        const { runId } = await engine.trigger(tenSteps.name, {});
        // Not `const p = engine.result(...)`: the promise in the frame would hold the view too.
        if (args.holdViews) check(await engine.result(runId, { timeout: '120s' }));
        else await engine.result(runId, { timeout: '120s' }).then(check);
      }
    };
    await Promise.all(Array.from({ length: conc }, client));
  };
  await loop(args.warmRuns ?? 200, args.conc ?? 100);
  // utime + stime of the main thread, in clock ticks (100 per second on Linux).
  const mainCpuMs = () => {
    const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  const scavenges: number[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === 1) scavenges.push(e.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const cpu0 = mainCpuMs();
  const t0 = performance.now();
  await loop(args.runs ?? 1000, args.conc ?? 100);
  const seconds = (performance.now() - t0) / 1000;
  const cpuMs = mainCpuMs() - cpu0;
  h.disable();
  gc.disconnect();
  await engine.stop();
  const steps = (args.runs ?? 1000) * STEPS_PER_RUN;
  scavenges.sort((a, b) => a - b);
  console.log(JSON.stringify({
    p50: ns(h.percentile(50)), p99: ns(h.percentile(99)), max: ns(h.max), stepsPerS: steps / seconds,
    mainCpuUsPerStep: (cpuMs * 1000) / steps, scavenges: scavenges.length, scavengeMedianMs: scavenges[scavenges.length >> 1] ?? 0,
  }));
} else if (args.mode === 'fill') {
  await (await open()).stop();
  await new Promise((r) => setTimeout(r, 50));
  // History written straight into the engine's tables (the engine would take minutes for 10^6).
  const db = new Database(join(args.dataDir, 'tranquil.db'));
  db.pragma('journal_mode = WAL');
  const runs = args.runs ?? 1000;
  const base = (db.prepare('SELECT coalesce(max(created_seq), 0) AS n FROM runs').get() as { n: number }).n;
  const insRun = db.prepare(`INSERT INTO runs (run_id, workflow, version, status, input, output, created_at, updated_at, created_seq) VALUES (?, ?, 'v', 'succeeded', '{}', '{}', ?, ?, ?)`);
  const insStep = db.prepare(`INSERT INTO steps (run_seq, run_id, seq, name, kind, status, attempts, result) VALUES (?, ?, 0, 's0', 'do', 'succeeded', 1, ?)`);
  const result = JSON.stringify(STEP_RESULT);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 1; i <= runs; i++) {
      const id = `hist-${i}`;
      insRun.run(id, tenSteps.name, now, now, base + i);
      insStep.run(base + i, id, result);
    }
  })();
  db.close();
  const engine = await open();
  await engine.result((await engine.trigger(tenSteps.name, {})).runId, { timeout: '60s' });
  process.kill(process.pid, 'SIGKILL'); // a crash: no clean stop, no mark
} else {
  const t0 = performance.now();
  const engine = await open();
  const ms = performance.now() - t0;
  await engine.stop();
  console.log(JSON.stringify({ startMs: ms }));
}
