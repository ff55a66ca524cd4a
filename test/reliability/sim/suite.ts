// The CI slice of the simulation as a vitest test: a fixed range of seeds in each of two
// files, each run on sim:long's worker processes (long.ts), one per core, plus a rotating slice whose first seed comes
// from the commit (rotatingFrom), so every commit explores seeds CI never ran while a
// commit's seeds stay the same (a failure reproduces). A failing seed is reported with its
// one-line reproduction; the data dir of the failing seed is kept for inspection. Seeds that
// fail on a known, reported engine bug (known-failures.ts) are run and, when they fail,
// counted instead of failing the test (SIM_NO_SKIP=1 fails on them too).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { SimOptions } from './harness.ts';
import { KNOWN_FAILURES } from './known-failures.ts';

const LONG = fileURLToPath(new URL('./long.ts', import.meta.url));
/** Where the seeds' data dirs go: tmpfs when there is one (SIM_TMPDIR overrides). The
 *  simulation's crashes happen in-process at fault points, so what it checks reads the same
 *  bytes on tmpfs as on a disk; a disk only adds fsync waits, which made the two slices (run
 *  side by side with other files, docs/testing.md) ~30% slower. Real-disk crashes are the
 *  crash tests' job (test/crash/). */
const SIM_TMP = process.env.SIM_TMPDIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
const REPO = resolve(dirname(LONG), '../../..');

/** Seeds of the rotating slice per commit (split over the two files). ~45 s of one core on
 *  the 2-core bench machine, unloaded; measured in docs/reliability.md. */
export const ROTATING_SEEDS = 240;
/** The rotating slice starts in [ROTATING_BASE, ROTATING_BASE + ROTATING_SPAN): far from the
 *  fixed slice (1-1,500) and from the ranges the long runs of issues 38/46/47 used (900,001-
 *  957,000, 5,000,001-5,100,000). Below 2^31: the generator takes the seed as a 32-bit int. */
export const ROTATING_BASE = 10_000_001;
export const ROTATING_SPAN = 90_000_000;

/** The rotating slice's first seed: SIM_ROTATING_FROM if set, else derived from
 *  `git rev-parse HEAD` (its first 12 hex digits, modulo the span). */
export function rotatingFrom(): { from: number; source: string } {
  const forced = process.env.SIM_ROTATING_FROM;
  if (forced !== undefined) {
    const n = Number(forced);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`SIM_ROTATING_FROM must be a positive integer seed, got ${JSON.stringify(forced)}`);
    return { from: n, source: 'SIM_ROTATING_FROM' };
  }
  let head: string;
  try {
    head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dirname(fileURLToPath(import.meta.url)), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // No git (a package tarball): a fixed start, said in the test name.
    return { from: ROTATING_BASE, source: 'no git: fixed start' };
  }
  return { from: ROTATING_BASE + (parseInt(head.slice(0, 12), 16) % ROTATING_SPAN), source: `commit ${head.slice(0, 12)}` };
}

/** Part `part` (0-based) of `parts` of the rotating slice, as one vitest test. */
export function simulateRotating(part: number, parts: number, options: SimOptions = { faultPoints: true }): void {
  const { from, source } = rotatingFrom();
  const per = Math.ceil(ROTATING_SEEDS / parts);
  const first = from + part * per;
  const count = Math.min(per, ROTATING_SEEDS - part * per);
  simulateSeeds(first, count, options, `rotating slice ${from}..${from + ROTATING_SEEDS - 1} (${source}); this part again: SIM_ROTATING_FROM=${from} npx vitest run ${fileOf(part)}`);
}

const fileOf = (part: number) => `test/reliability/simulation-${part === 0 ? 'a' : 'b'}.test.ts`;

/** The seeds as one vitest test, run by sim:long's workers (long.ts), one per core: vitest
 *  runs one file at a time on this 2-core machine, so in-process the second core idled. */
export function simulateSeeds(first: number, count: number, options: SimOptions = { faultPoints: true }, slice?: string): void {
  it(`simulation: seeds ${first}..${first + count - 1} hold every invariant${slice ? ` [${slice}]` : ''}`, async () => {
    if (slice) console.info(`simulation ${slice}: seeds ${first}..${first + count - 1}`);
    const flags = [...(options.faultPoints ? [] : ['--no-fault-points']), ...(options.concurrency === false ? ['--no-concurrency'] : []), ...(options.children === false ? ['--no-children'] : []), ...(options.queues === false ? ['--no-queues'] : [])];
    // The list holds seeds as they run with fault points and concurrent branches.
    const skip = options.faultPoints === true && options.concurrency !== false && options.children !== false && options.queues !== false && !process.env.SIM_NO_SKIP;
    const dir = mkdtempSync(join(tmpdir(), 'tq-sim-ci-'));
    const out = join(dir, 'summary.json');
    const workers = Math.max(1, Math.min(2, availableParallelism()));
    const args = ['--import', 'tsx', LONG, '--seeds', String(count), '--from', String(first), '--workers', String(workers), '--out', out, ...flags];
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: SIM_TMP } });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('error', reject);
      child.on('exit', (c) => resolve({ code: c, output }));
    });
    let summary: LongSummary;
    try {
      summary = JSON.parse(readFileSync(out, 'utf8')) as LongSummary;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const known = summary.failures.filter((f) => skip && KNOWN_FAILURES.has(f.seed));
    const failures = summary.failures.filter((f) => !known.includes(f)).map((f) => `seed ${f.seed}: ${f.violations[0]} (data dir ${f.dataDir}); reproduce: ${f.reproduce}`);
    const knownNote = known.length ? `; ${known.length} seeds failed on known engine bugs (sim/known-failures.ts, npx tsx test/reliability/sim/known-bugs.ts)` : '';
    console.info(`simulation ${first}..${first + count - 1}: ${JSON.stringify(summary.totals)}, ${summary.durationSeconds}s on ${workers} workers, ${failures.length} failing seeds${knownNote}`);
    if (failures.length && slice) failures.push(`(${slice})`);
    expect(failures).toEqual([]);
    // Every seed ran (a worker lost counts as a failure above), and the runner ended cleanly.
    expect(summary.seeds, output.slice(-2000)).toBe(count);
    expect(summary.state).toBe('finished');
    expect(code === 0 || known.length > 0, output.slice(-2000)).toBe(true);
    // A bound for a stuck harness only (each seed has its own hang check, SIM_HANG_MS): 750
    // seeds took 293-355 s on one core of the 2-core machine at load 13-16.
  }, 900_000);
}

interface LongSummary {
  state: string;
  seeds: number;
  durationSeconds: number;
  totals: Record<string, number>;
  failures: { seed: number; violations: string[]; dataDir?: string; reproduce: string }[];
}
