// The standing long run of the deterministic simulation (issue 38):
//   npm run sim:long -- --seeds 100000 --from 5000001 [--workers 2] [--out file.json]
//                       [--chunk 20] [--recycle 2000] [--no-fault-points] [--no-concurrency] [--no-children] [--no-queues]
// Seeds are independent, so worker processes (child_process.fork of this file) run them side
// by side; the parent hands out chunks of seeds as workers ask, prints progress, and keeps a
// summary JSON up to date (at every progress line and at the end, also when stopped by
// SIGINT/SIGTERM): seeds run, every failing seed with its first violations and its
// one-command reproduction, totals, seeds/s, the commit, the command, the duration. Default
// path: .sim-runs/long-<from>-<time>.json (git-ignored). Exit code 1 if any seed failed.
//
// A worker is replaced after `--recycle` seeds (a crashed engine's sessions stay behind in
// its process until they end, as in a real crash they would not) and when it dies or stays
// silent past the watchdog (a seed that hangs the process, not only the engine): the seed
// it was on counts as failed, with what happened.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSeed, type SeedReport, type SimOptions } from './harness.ts';

const here = fileURLToPath(import.meta.url);
const repo = resolve(dirname(here), '../../..');

/** What a worker sends back per seed: the report minus what the parent does not keep. */
type SeedResult = Omit<SeedReport, 'dataDir'> & { dataDir?: string };
type ToWorker = { t: 'seeds'; seeds: number[] } | { t: 'exit' };
type ToParent = { t: 'ready' } | { t: 'start'; seed: number } | { t: 'done'; report: SeedResult };

if (process.argv.includes('--worker')) await worker();
else await parent();

async function worker(): Promise<void> {
  const options: SimOptions = { faultPoints: !process.argv.includes('--no-fault-points'), concurrency: !process.argv.includes('--no-concurrency'), children: !process.argv.includes('--no-children'), queues: !process.argv.includes('--no-queues') };
  const send = (m: ToParent) => new Promise<void>((r) => process.send!(m, () => r()));
  process.on('message', async (m: ToWorker) => {
    if (m.t === 'exit') process.exit(0);
    for (const seed of m.seeds) {
      await send({ t: 'start', seed });
      const report = await runSeed(seed, options);
      await send({ t: 'done', report });
    }
    await send({ t: 'ready' });
  });
  await send({ t: 'ready' });
}

async function parent(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const int = (name: string, dflt: number): number => {
    const raw = flag(name);
    const n = raw === undefined ? dflt : Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) {
      console.error(`sim:long: ${name} must be a positive integer, got ${JSON.stringify(raw)}`);
      process.exit(2);
    }
    return n;
  };
  const count = int('--seeds', 1000);
  const from = int('--from', 1);
  const workers = Math.min(int('--workers', 2), count);
  const chunk = int('--chunk', 20);
  const recycle = int('--recycle', 2000);
  const extra = args.filter((a) => a === '--no-fault-points' || a === '--no-concurrency' || a === '--no-children' || a === '--no-queues');
  const hangMs = Number(process.env.SIM_HANG_MS ?? 20_000);
  // A seed gives the engine HANG_MS per idle wait (a few per seed) before it counts as hung;
  // a worker silent far beyond that is stuck outside the engine.
  const watchdogMs = Math.max(10 * hangMs, 120_000);
  const startedAt = new Date();
  const out = resolve(flag('--out') ?? join(repo, '.sim-runs', `long-${from}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`));
  mkdirSync(dirname(out), { recursive: true });

  const git = (...a: string[]) => {
    try {
      return execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  };
  const commit = git('rev-parse', 'HEAD');
  const dirty = (git('status', '--porcelain', '--untracked-files=no') ?? '') !== '';

  const totals = { runs: 0, attempts: 0, actions: 0, crashes: 0, restarts: 0, clockJumps: 0, signals: 0, duplicates: 0, queuedBodies: 0 };
  const faultCrashes: Record<string, number> = {};
  const failures: { seed: number; violations: string[]; dataDir?: string; reproduce: string }[] = [];
  const done: number[] = [];
  let next = from;
  const end = from + count;
  const retry: number[] = [];
  const take = (): number[] => {
    const seeds = retry.splice(0, chunk);
    while (seeds.length < chunk && next < end) seeds.push(next++);
    return seeds;
  };
  const reproduce = (seed: number) => `npm run sim -- --seed ${seed}${extra.length ? ` ${extra.join(' ')}` : ''}`;

  const summary = (state: 'running' | 'finished' | 'interrupted') => {
    const secs = (Date.now() - startedAt.getTime()) / 1000;
    return {
      state,
      command: `npm run sim:long -- ${args.join(' ')}`,
      env: { SIM_HANG_MS: process.env.SIM_HANG_MS ?? null },
      commit, dirty, node: process.version, workers, pid: process.pid,
      from, requested: count,
      seeds: done.length,
      ranges: ranges(done),
      failed: failures.length,
      failures,
      totals, faultCrashes,
      startedAt: startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      durationSeconds: Math.round(secs),
      seedsPerSecond: +(done.length / Math.max(secs, 0.001)).toFixed(2),
    };
  };
  const write = (state: 'running' | 'finished' | 'interrupted') => {
    // Written whole, then renamed: a reader never sees half a file.
    writeFileSync(`${out}.tmp`, `${JSON.stringify(summary(state), null, 2)}\n`);
    renameSync(`${out}.tmp`, out);
  };

  const record = (r: SeedResult) => {
    done.push(r.seed);
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r[k];
    for (const [k, v] of Object.entries(r.faultCrashes)) faultCrashes[k] = (faultCrashes[k] ?? 0) + (v ?? 0);
    if (r.violations.length === 0) return;
    failures.push({ seed: r.seed, violations: r.violations.slice(0, 5), dataDir: r.dataDir, reproduce: reproduce(r.seed) });
    console.log(`SIM FAIL seed=${r.seed}: ${r.violations[0]}`);
    for (const v of r.violations.slice(1, 5)) console.log(`  also: ${v}`);
    if (r.dataDir) console.log(`  data dir kept: ${r.dataDir}`);
    console.log(`  reproduce: ${reproduce(r.seed)}`);
  };
  const lost = (seed: number, what: string) => {
    const empty = { runs: 0, attempts: 0, actions: 0, crashes: 0, faultCrashes: {}, restarts: 0, clockJumps: 0, signals: 0, duplicates: 0, childCalls: 0, queuedBodies: 0 };
    record({ seed, violations: [`worker: ${what}`], ...empty });
  };

  console.log(`sim:long: pid ${process.pid} (SIGTERM stops it, summary kept): seeds ${from}..${end - 1} on ${workers} workers (commit ${commit?.slice(0, 12) ?? 'unknown'}${dirty ? ', dirty' : ''}), summary: ${out}`);
  let lastPrint = Date.now();
  const progress = () => {
    const s = summary('running');
    const left = count - s.seeds;
    const eta = s.seedsPerSecond > 0 ? Math.round(left / s.seedsPerSecond / 60) : '?';
    console.log(`... ${s.seeds}/${count} seeds, ${s.failed} failed, ${s.durationSeconds}s, ${s.seedsPerSecond} seeds/s, ~${eta} min left`);
    write('running');
    lastPrint = Date.now();
  };

  let stopping = false;
  const live = new Set<ChildProcess>();
  const finished = new Promise<void>((resolveAll) => {
    const spawn = () => {
      if (stopping || (retry.length === 0 && next >= end)) {
        if (live.size === 0) resolveAll();
        return;
      }
      const child = fork(here, ['--worker', ...extra], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      live.add(child);
      let ran = 0;
      let current: number | undefined;
      let pending: number[] = [];
      let watchdog: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          if (current !== undefined) lost(current, `no result within ${watchdogMs / 1000}s (process stuck); killed`);
          current = undefined;
          child.kill('SIGKILL');
        }, watchdogMs);
      };
      child.on('message', (m: ToParent) => {
        arm();
        if (m.t === 'start') {
          current = m.seed;
          pending = pending.filter((s) => s !== m.seed);
        } else if (m.t === 'done') {
          current = undefined;
          ran++;
          record(m.report);
          if (Date.now() - lastPrint > 30_000 || done.length % 1000 === 0) progress();
        } else {
          const seeds = ran >= recycle || stopping ? [] : take();
          if (seeds.length === 0) return void child.send({ t: 'exit' } satisfies ToWorker);
          pending = seeds;
          child.send({ t: 'seeds', seeds } satisfies ToWorker);
        }
      });
      child.on('exit', (code, sig) => {
        clearTimeout(watchdog);
        live.delete(child);
        if (current !== undefined && !stopping) lost(current, `worker exited (${sig ?? code}) while running it`);
        // Seeds handed out but not begun go to the next worker.
        if (pending.length) retry.unshift(...pending);
        spawn();
      });
      arm();
    };
    for (let i = 0; i < workers; i++) spawn();
  });

  const stop = (sig: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`sim:long: ${sig}: stopping; seeds under way are not counted`);
    for (const c of live) c.kill('SIGKILL');
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  await finished;
  const state = stopping ? 'interrupted' : 'finished';
  write(state);
  const s = summary(state);
  console.log(JSON.stringify({ state, seeds: s.seeds, failed: s.failed, ...totals, seconds: s.durationSeconds, seedsPerSecond: s.seedsPerSecond, summary: out }));
  process.exit(failures.length ? 1 : 0);
}

/** Sorted seeds as [first, last] ranges (a stopped run leaves gaps). */
function ranges(seeds: readonly number[]): [number, number][] {
  const sorted = [...seeds].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s === last[1] + 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}
