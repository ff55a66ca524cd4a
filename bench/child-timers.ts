// Child process for the timer workloads, so that RSS is the engine's, not the harness's.
// Usage: node --import tsx bench/child-timers.ts '<json args>'
// Modes:
//   same-instant  N runs sleepUntil(at = start + lead); wake lateness, time to complete all, RSS
//   spread        N runs due at `rate`/s starting at start + lead; wake lateness
//   overdue-build N runs sleepUntil(start + lead), then a clean stop (the file is copied by the parent)
//   restart       open an existing data dir whose timers are overdue; time until every run finished
// Prints one JSON line on stdout.
import Database from 'better-sqlite3';
import { createEngine } from '../compose/index.ts';
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { ALL_WORKFLOWS, sleeper, wakeProbe } from './lib/workflows.ts';
import { peakRssMiB, rssMiB } from './lib/proc-mem.ts';
import { percentile } from './lib/stats.ts';

interface Args {
  mode: 'same-instant' | 'spread' | 'overdue-build' | 'restart';
  backend: 'sqlite' | 'restate';
  durability: 'full' | 'normal';
  dataDir: string;
  n: number;
  leadMs?: number;
  /** same-instant: after scheduling, copy the file (VACUUM INTO) for the restart workload. */
  snapshotTo?: string;
  rate?: number;
  inFlight?: number;
  deadlineMs: number;
}

const a = JSON.parse(process.argv[2]!) as Args;
const wall = () => Date.now();
const out: Record<string, unknown> = { mode: a.mode, n: a.n };
const deadline = wall() + a.deadlineMs;
const timeLeft = () => Math.max(1, deadline - wall());

function countSucceeded(woke: number): number {
  // Other backends keep no SQLite file here: count the runs whose post-wake step ran.
  if (a.backend !== 'sqlite') return woke;
  // Read-only verification through a second connection (WAL readers do not block the writer).
  const db = new Database(join(a.dataDir, 'tranquil.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM runs WHERE status = 'succeeded' AND workflow = ?`).get(sleeper.name) as { n: number }).n;
  } finally {
    db.close();
  }
}

async function withDeadline<T>(p: Promise<T>, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: deadline`)), timeLeft())))]);
  } finally {
    clearTimeout(t);
  }
}

async function main(): Promise<void> {
  const engine = await createEngine({ backend: a.backend, dataDir: a.dataDir, workflows: ALL_WORKFLOWS, durability: a.durability, maxConcurrentRuns: 1000 });
  const exec = engine.executor;
  const lateness = new Float64Array(a.n);
  let woke = 0;
  let lastWake = 0;
  let allWoke: () => void = () => {};
  const allWokePromise = new Promise<void>((r) => (allWoke = r));
  wakeProbe.onWake = (at, now) => {
    if (woke < a.n) lateness[woke] = now - at;
    woke++;
    lastWake = now;
    if (woke === a.n) allWoke();
  };

  if (a.mode === 'restart') {
    const t0 = wall();
    await engine.start();
    out.startMs = wall() - t0;
    await withDeadline(allWokePromise, 'catch-up');
    await withDeadline(exec.idle(), 'idle');
    out.catchupMs = wall() - t0;
    out.lastWakeMs = lastWake - t0;
    out.peakRssMiB = peakRssMiB();
    await engine.stop();
    out.succeeded = countSucceeded(woke);
    return;
  }

  await engine.start();
  const gc = (globalThis as { gc?: () => void }).gc;
  let heapBase = 0;
  if (gc) {
    gc();
    heapBase = process.memoryUsage().heapUsed;
  }
  const t0 = wall();
  const base = t0 + (a.leadMs ?? 5000);
  const rate = a.rate ?? 0;
  const atOf = (i: number) => (a.mode === 'spread' ? base + Math.floor((i * 1000) / rate) : base);
  // Schedule: keep `inFlight` triggers outstanding at a time.
  let next = 0;
  const inFlight = a.inFlight ?? 500;
  const worker = async () => {
    while (next < a.n) {
      const i = next++;
      await engine.trigger(sleeper.name, { at: atOf(i) });
    }
  };
  await withDeadline(Promise.all(Array.from({ length: Math.min(inFlight, a.n) }, worker)), 'schedule');
  await withDeadline(exec.idle(), 'schedule idle');
  const scheduled = wall();
  out.scheduleMs = scheduled - t0;
  out.scheduleRunsPerS = a.n / ((scheduled - t0) / 1000);
  out.instantAt = base - t0;
  out.scheduledBeforeInstant = scheduled < base;
  out.wokeBeforeInstant = woke;
  out.rssSleepingMiB = rssMiB();
  out.heapSleepingMiB = process.memoryUsage().heapUsed / 2 ** 20;
  if (gc) {
    // Diagnostic only (run with --expose-gc): JS heap still reachable per sleeping run.
    gc();
    out.heapSleepingAfterGcMiB = process.memoryUsage().heapUsed / 2 ** 20;
    out.retainedHeapBytesPerSleepingRun = (process.memoryUsage().heapUsed - heapBase) / a.n;
  }

  if (a.snapshotTo && a.backend === 'sqlite') {
    const t = wall();
    const db = new Database(join(a.dataDir, 'tranquil.db'), { readonly: true, fileMustExist: true });
    try {
      db.exec(`VACUUM INTO '${a.snapshotTo.replace(/'/g, "''")}'`);
    } finally {
      db.close();
    }
    out.snapshotMs = wall() - t;
    out.dbBytes = statSync(a.snapshotTo).size;
    out.snapshotBeforeInstant = wall() < base;
  }

  if (a.mode === 'overdue-build') {
    await engine.stop();
    out.at = base;
    out.peakRssMiB = peakRssMiB();
    return;
  }

  await withDeadline(allWokePromise, 'wake');
  await withDeadline(exec.idle(), 'idle');
  const done = wall();
  const lastDue = atOf(a.n - 1);
  out.completeAfterInstantMs = done - base; // same-instant: all runs finished, measured from the instant
  out.completeAfterLastDueMs = done - lastDue;
  const l = lateness.subarray(0, Math.min(woke, a.n));
  out.latenessP50Ms = percentile(l, 50);
  out.latenessP99Ms = percentile(l, 99);
  out.latenessMaxMs = percentile(l, 100);
  out.peakRssMiB = peakRssMiB();
  if (gc) {
    // After every run finished: anything still reachable per run is a leak.
    gc();
    out.retainedHeapBytesPerFinishedRun = (process.memoryUsage().heapUsed - heapBase) / a.n;
  }
  await engine.stop();
  out.succeeded = countSucceeded(woke);
}

main()
  .then(() => {
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exit(0);
  })
  .catch((err) => {
    process.stdout.write(JSON.stringify({ ...out, error: String((err as Error)?.message ?? err) }) + '\n');
    process.exit(1);
  });
