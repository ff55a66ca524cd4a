// npm run bench:scale [-- --quick] [-- --only=steps,sleepers,concurrent,sittings]: how cost grows
// with scale (issue 44), one fresh child process per point, on the production build
// (bench/child-scale.ts and bench/child-citizen.ts compiled, engine from dist/, plain node):
//   steps       one run of 10 .. 100,000 sequential step.do: time per step, memory, and a fresh
//               engine's replay of the recorded steps after a crash before the result
//   sleepers    10^3 .. 10^6 sleeping runs (seeded into the schema), a tenth due at one instant:
//               RSS while they sleep, wake lateness p50/p99/max of the due ones
//   concurrent  1 .. 10,000 runs in flight x 10 steps: steps/s, run latency p99, event-loop lag p99
//   sittings    100 concurrent runs, 5 fresh children one after another: event-loop lag
//               p50/p99/max with the machine's CPU steal and load beside each
// Each curve's growth exponent between neighbouring points (log-log slope: 0 flat, 1 linear)
// is printed with the tables. Writes bench/results/<ISO>-scale.json and (a full run of every curve)
// docs/bench/scale-*.svg; `--from=<that json>` re-renders its tables and charts without measuring.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCompiled, REPO, spawnCompiled, stopAllChildren, stopChild } from './lib/children.ts';
import { cpuShare, cpuTimes, loadAvg1 } from './lib/host-load.ts';
import { machineInfo } from './lib/machine.ts';
import { seedSleepers } from './lib/scale-seed.ts';
import { summarize } from './lib/stats.ts';
import { barChart, lineChart, type Series } from './lib/svg.ts';

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.find((x) => x.startsWith('--only='))?.slice(7).split(',');
const on = (curve: string) => !onlyArg || onlyArg.includes(curve);
const log = (s: string) => console.error(`[scale] ${s}`);
type Row = Record<string, number>;

/** One point: the child's JSON line (bounded), then the child stopped by PID. */
async function point(args: Record<string, unknown>, timeoutMs: number, nodeFlags: string[] = []): Promise<Row> {
  const s = spawnCompiled('child-scale.ts', args, nodeFlags);
  try {
    const out = await s.nextJson(timeoutMs);
    await Promise.race([s.exited, new Promise((r) => setTimeout(r, 10_000))]);
    return out as Row;
  } finally {
    await stopChild(s);
  }
}

async function inTempDir<T>(prefix: string, f: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `scale-${prefix}-`));
  try {
    return await f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const medianRow = (reps: Row[]): Row => Object.fromEntries(Object.keys(reps[0]!).map((k) => [k, summarize(reps.map((r) => r[k]!)).median]));

async function stepsCurve(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of quick ? [10, 100, 1_000, 10_000] : [10, 100, 1_000, 10_000, 100_000]) {
    const reps: Row[] = [];
    for (let r = 0; r < (n <= 1_000 ? 3 : 1); r++) {
      reps.push(await inTempDir('steps', async (dataDir) => {
        const run = await point({ mode: 'steps-run', dataDir, n }, 1_800_000, ['--expose-gc']);
        const replay = await point({ mode: 'steps-replay', dataDir, n }, 600_000, ['--expose-gc']);
        return {
          steps: n, usPerStep: run.usPerStep!, runMs: run.runMs!, rssMiB: run.rssMiB!, heapMiB: run.heapMiB!,
          replayMs: replay.replayMs!, replayUsPerStep: replay.replayUsPerStep!, replayRssMiB: replay.rssMiB!, replayHeapMiB: replay.heapMiB!,
        };
      }));
    }
    rows.push(medianRow(reps));
    log(`steps ${n}: ${JSON.stringify(rows.at(-1))}`);
  }
  return rows;
}

async function sleepersCurve(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000]) {
    rows.push(await inTempDir('sleepers', async (dataDir) => {
      // The instant lies long enough after the file is ready for the child to open it (a start
      // after seeding runs the whole-file check, ~2 ms per MB) and settle 1 s before the RSS.
      const leadMs = 5_000 + n / 100;
      const t = performance.now();
      const at = await seedSleepers(dataDir, n, () => Date.now() + leadMs);
      log(`sleepers ${n}: seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      const r = await point({ mode: 'sleepers', dataDir, n, at }, 900_000, ['--expose-gc']);
      if (!r.beforeInstant) log(`sleepers ${n}: the child was not ready before the instant; lateness includes its start`);
      return { sleeping: n, ...r, beforeInstant: r.beforeInstant ? 1 : 0 } as Row;
    }));
    log(`sleepers ${n}: ${JSON.stringify(rows.at(-1))}`);
  }
  return rows;
}

async function concurrentCurve(): Promise<Row[]> {
  // [runs in flight, runs measured, warm-up runs]: ~2 waves at the largest sizes.
  const plan = quick
    ? [[1, 50, 10], [10, 200, 50], [100, 1_000, 200], [1_000, 2_000, 500]]
    : [[1, 100, 20], [10, 500, 100], [100, 3_000, 500], [1_000, 5_000, 1_000], [10_000, 20_000, 1_000]];
  const rows: Row[] = [];
  for (const [conc, runs, warmRuns] of plan) {
    const r = await inTempDir('conc', (dataDir) => point({ mode: 'concurrent', dataDir, conc, runs, warmRuns }, 900_000));
    rows.push({ inFlight: conc!, runs: runs!, ...r });
    log(`concurrent ${conc}: ${JSON.stringify(rows.at(-1))}`);
  }
  return rows;
}

/** The good-citizen lag child (bench/child-citizen.ts, mode lag, as bench/lib/citizen.ts runs it)
 *  five times, with the machine's steal and load over each sitting. */
async function sittings(): Promise<Row[]> {
  const rows: Row[] = [];
  for (let i = 1; i <= 5; i++) {
    rows.push(await inTempDir('sitting', async (dataDir) => {
      const load0 = loadAvg1();
      const cpu0 = cpuTimes();
      const s = spawnCompiled('child-citizen.ts', { mode: 'lag', dataDir, runs: quick ? 2_000 : 5_000, conc: 100, warmRuns: quick ? 500 : 1_000 });
      try {
        const r = (await s.nextJson(900_000)) as Row;
        return { sitting: i, lagP50Ms: r.p50!, lagP99Ms: r.p99!, lagMaxMs: r.max!, stepsPerS: r.stepsPerS!, ...cpuShare(cpu0, cpuTimes()), loadAvg1Before: load0, loadAvg1After: loadAvg1() };
      } finally {
        await stopChild(s);
      }
    }));
    log(`sitting ${i}: ${JSON.stringify(rows.at(-1))}`);
  }
  return rows;
}

/** Log-log slope between neighbouring points: 0 flat, 1 linear, 2 quadratic; ~0.1-0.3 a logarithm's
 *  shape over a decade. */
function exponents(rows: Row[], x: string, y: string): string {
  return rows.slice(1).map((r, i) => (Math.log(r[y]! / rows[i]![y]!) / Math.log(r[x]! / rows[i]![x]!)).toFixed(2)).join(', ');
}

const fmt = (v: number | string | undefined): string =>
  typeof v === 'string' ? v : v === undefined || !Number.isFinite(v) ? '-' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString();
const table = (head: string[], rows: Record<string, number | string>[], cols: string[]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${cols.map((c) => fmt(r[c])).join(' | ')} |`)].join('\n');
const series = (rows: Row[], x: string, name: string, y: string, dashed = false): Series => ({ name, dashed, points: rows.map((r) => ({ x: r[x]!, y: r[y]! })) });

/** The tables (markdown) and charts of a result, measured now or read back (--from). */
function render(out: Record<string, unknown>): { md: string[]; charts: Record<string, string> } {
  const md: string[] = [];
  const charts: Record<string, string> = {};
  const sub = `${out.mode} mode, ${String(out.startedAt).slice(0, 16)}Z, built engine, SQLite durability full; shared 2-core machine`;
  const pair = (a: number | undefined, b: number | undefined) => `${fmt(a)} / ${fmt(b)}`;
  if (out.steps) {
    const rows = out.steps as Row[];
    md.push('### Steps in one run', table(['steps in the run', 'µs per step', 'run (ms)', 'RSS / heap after the last step (MiB)', 'open + replay after a crash (ms)', 'replay µs per step', 'RSS / heap after replay (MiB)'],
      rows.map((r) => ({ ...r, mem: pair(r.rssMiB, r.heapMiB), replayMem: pair(r.replayRssMiB, r.replayHeapMiB) })), ['steps', 'usPerStep', 'runMs', 'mem', 'replayMs', 'replayUsPerStep', 'replayMem']));
    md.push(`Growth exponents (log-log slope between neighbouring points): run time ${exponents(rows, 'steps', 'runMs')}; replay ${exponents(rows, 'steps', 'replayMs')}; heap ${exponents(rows, 'steps', 'heapMiB')}.`);
    charts['scale-steps.svg'] = lineChart({ title: 'One run of n sequential step.do: time per step', subtitle: sub, xLabel: 'steps in the run (log)', yLabel: 'µs per step', logX: true,
      series: [series(rows, 'steps', 'run', 'usPerStep')] });
    charts['scale-steps-replay.svg'] = lineChart({ title: 'One run of n steps: a fresh engine opens the file and replays it', subtitle: sub, xLabel: 'steps in the run (log)', yLabel: 'ms, open + replay after a crash', logX: true,
      series: [series(rows, 'steps', 'open + replay', 'replayMs')] });
    charts['scale-steps-memory.svg'] = lineChart({ title: 'One run of n sequential step.do: memory', subtitle: sub, xLabel: 'steps in the run (log)', yLabel: 'MiB', logX: true,
      series: [series(rows, 'steps', 'RSS after the last step', 'rssMiB'), series(rows, 'steps', 'heap after the last step', 'heapMiB'), series(rows, 'steps', 'RSS after replay', 'replayRssMiB', true), series(rows, 'steps', 'heap after replay', 'replayHeapMiB', true)] });
  }
  if (out.sleepers) {
    const rows = out.sleepers as Row[];
    md.push('### Sleeping runs', table(['runs sleeping', 'due at one instant', 'engine start (ms)', 'RSS while all sleep (MiB)', 'heap (MiB)', 'wake lateness p50 (ms)', 'p99', 'max', 'peak RSS (MiB)'], rows, ['sleeping', 'due', 'startMs', 'sleepingRssMiB', 'sleepingHeapMiB', 'latenessP50Ms', 'latenessP99Ms', 'latenessMaxMs', 'peakRssMiB']));
    md.push(`Growth exponents: RSS ${exponents(rows, 'sleeping', 'sleepingRssMiB')}; lateness p99 ${exponents(rows, 'sleeping', 'latenessP99Ms')}; max ${exponents(rows, 'sleeping', 'latenessMaxMs')}.`);
    charts['scale-sleepers.svg'] = lineChart({ title: 'Sleeping runs: memory', subtitle: sub, xLabel: 'runs sleeping (log)', yLabel: 'MiB', logX: true,
      series: [series(rows, 'sleeping', 'RSS while all sleep', 'sleepingRssMiB'), series(rows, 'sleeping', 'peak RSS (a tenth woken)', 'peakRssMiB', true), series(rows, 'sleeping', 'heap while all sleep', 'sleepingHeapMiB')] });
    charts['scale-sleepers-lateness.svg'] = lineChart({ title: 'Sleeping runs: a tenth due at one instant, wake lateness', subtitle: sub, xLabel: 'runs sleeping (log)', yLabel: 'ms late', logX: true,
      series: [series(rows, 'sleeping', 'p50', 'latenessP50Ms'), series(rows, 'sleeping', 'p99', 'latenessP99Ms'), series(rows, 'sleeping', 'max', 'latenessMaxMs', true)] });
  }
  if (out.concurrent) {
    const rows = out.concurrent as Row[];
    md.push('### Concurrent runs', table(['runs in flight', 'runs measured', 'journaled steps/s', 'run latency p50 (ms)', 'p99', 'event-loop lag p50 (ms)', 'p99', 'max', 'peak RSS (MiB)'], rows, ['inFlight', 'runs', 'stepsPerS', 'runP50Ms', 'runP99Ms', 'lagP50Ms', 'lagP99Ms', 'lagMaxMs', 'peakRssMiB']));
    md.push(`Growth exponents: steps/s ${exponents(rows, 'inFlight', 'stepsPerS')}; run latency p99 ${exponents(rows, 'inFlight', 'runP99Ms')}; lag p99 ${exponents(rows, 'inFlight', 'lagP99Ms')}.`);
    charts['scale-concurrent.svg'] = lineChart({ title: 'Runs in flight x 10 steps: throughput', subtitle: sub, xLabel: 'runs in flight (log)', yLabel: 'journaled steps/s', logX: true, series: [series(rows, 'inFlight', 'steps/s', 'stepsPerS')] });
    charts['scale-concurrent-latency.svg'] = lineChart({ title: 'Runs in flight x 10 steps: latency and host event-loop lag', subtitle: sub, xLabel: 'runs in flight (log)', yLabel: 'ms', logX: true,
      series: [series(rows, 'inFlight', 'run latency p99', 'runP99Ms'), series(rows, 'inFlight', 'event-loop lag p99', 'lagP99Ms', true)] });
  }
  if (out.sittings) {
    const rows = out.sittings as Row[];
    md.push('### Host event loop, 100 concurrent runs, 5 sittings', table(['sitting', 'lag p50 (ms)', 'p99', 'max', 'steps/s', 'CPU steal %', 'CPU busy %', 'load avg (1 min) before', 'after'], rows, ['sitting', 'lagP50Ms', 'lagP99Ms', 'lagMaxMs', 'stepsPerS', 'stealPct', 'busyPct', 'loadAvg1Before', 'loadAvg1After']));
    const p99 = summarize(rows.map((r) => r.lagP99Ms!));
    md.push(`Lag p99 over the sittings: median ${fmt(p99.median)} ms, ${fmt(p99.min)}-${fmt(p99.max)} ms.`);
    charts['scale-lag-sittings.svg'] = barChart({ title: 'Host event-loop lag, 100 concurrent runs, 5 sittings', subtitle: `${out.mode} mode, ${String(out.startedAt).slice(0, 16)}Z, built engine; under each group: sitting: CPU steal %, load average`, yLabel: 'ms',
      bars: rows.flatMap((r) => (['lagP50Ms', 'lagP99Ms', 'lagMaxMs'] as const).map((k) => ({ group: `${r.sitting}: ${r.stealPct!.toFixed(1)}%, ${r.loadAvg1Before!.toFixed(0)}`, series: k.slice(3, 6).toLowerCase(), y: r[k]! }))) });
  }
  return { md, charts };
}

/** Charts come from full runs only: a quick pass does not overwrite what the docs link to. */
function writeCharts(out: Record<string, unknown>, charts: Record<string, string>): void {
  if (out.mode !== 'full') return;
  for (const [name, svg] of Object.entries(charts)) writeFileSync(join(REPO, 'docs', 'bench', name), svg);
  log(`wrote ${Object.keys(charts).length} charts in docs/bench/`);
}

const from = process.argv.find((x) => x.startsWith('--from='))?.slice(7);
if (from) {
  // Re-renders the tables and charts of an earlier result, measuring nothing.
  const out = JSON.parse(readFileSync(from, 'utf8')) as Record<string, unknown>;
  const { md, charts } = render(out);
  writeCharts(out, charts);
  console.log(md.join('\n\n'));
} else {
  const started = new Date();
  const out: Record<string, unknown> = { mode: quick ? 'quick' : 'full', startedAt: started.toISOString(), machine: machineInfo(), loadAvg1AtStart: loadAvg1() };
  ensureCompiled(); // before the first point: a sleepers point's instant is fixed before its child starts
  try {
    if (on('steps')) out.steps = await stepsCurve();
    if (on('sleepers')) out.sleepers = await sleepersCurve();
    if (on('concurrent')) out.concurrent = await concurrentCurve();
    if (on('sittings')) out.sittings = await sittings();
  } finally {
    await stopAllChildren();
  }
  out.finishedAt = new Date().toISOString();
  out.seconds = (Date.now() - started.getTime()) / 1000;
  const { md, charts } = render(out);
  out.markdown = md.join('\n\n');
  mkdirSync(join(REPO, 'bench', 'results'), { recursive: true });
  const file = join(REPO, 'bench', 'results', `${started.toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z-scale.json`);
  writeFileSync(file, JSON.stringify(out, null, 1));
  if (!onlyArg) writeCharts(out, charts);
  console.log(out.markdown);
  log(`wrote ${file} (${out.seconds} s)`);
}
