// npm run bench:scale-runs: how cost grows with the runs in the file, N = 10^3 .. 10^7
// (`--quick`: 10^3, 10^4, to prove the pipeline; `--max=<n>` stops after that size). One file
// grown in steps (bench/lib/seed-runs.ts: 85% succeeded and 5% failed with 3 journaled steps
// each, 10% sleeping; workflows orders 50%, emails 30%, reports 15%, billing 5%, and 100
// old runs of a retired 'legacy' workflow). At each size, fresh children on the production
// build (bench/scale-runs-child.ts) report start-up (whole-file check / after a clean stop /
// after a SIGKILL), list pages, describe, a new run's steps/s, one retention sweep of the
// min(10,000, N/2) oldest finished runs, and RSS; the real CLI (`node dist/cli.js`) is timed
// on the same reads, process start included. Files live under TMPDIR (put it on disk: 10^7
// runs take ~7 GB) and are deleted at the end. Writes bench/results/<ISO>-scale-runs.json
// after every size (a run cut short keeps its points) and docs/bench/scale-runs.svg.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { REPO, spawnCompiled, stopChild } from './lib/children.ts';
import { closeSeeded, maxSeq, openForSeeding, seedRuns, type RunMix } from './lib/seed-runs.ts';
import { logChart } from './lib/svg.ts';
import { MIGRATIONS } from '../src/adapters/sqlite/schema.ts';

const arg = (name: string) => process.argv.find((x) => x.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes('--quick');
const max = Number(arg('max') ?? Infinity);
// --seed-only=<n> --dir=<path>: only seed a data dir of n runs and exit; a run given it as
// --prebuilt=<path> uses it for the size n instead of growing its file there (the 10^7
// file seeds for tens of minutes on a loaded machine: in parallel with the smaller sizes).
const seedOnly = arg('seed-only');
const prebuilt = arg('prebuilt');
const SIZES = (quick ? [1e3, 1e4] : [1e3, 1e4, 1e5, 1e6, 1e7]).filter((n) => n <= max);
const DAY = 86_400_000;
const MIX: RunMix = {
  succeededPct: 85, failedPct: 5,
  workflows: [['orders', 50], ['emails', 30], ['reports', 15], ['billing', 5]],
  legacyRuns: 100, stepsPerFinishedRun: 3, wakeAt: Date.parse('2036-01-01T00:00:00Z'),
};
const now = Date.now();
// Seeded run i was created 3 s after run i-1, the newest of 10^7 a day ago; retention keeps
// 380 days, so only the runs the parent marks as finished 400 days ago are eligible.
const SPACING = 3000;
const TIME_OF_0 = now - DAY - 1e7 * SPACING;
const MAX_AGE = 380 * DAY;
const ANCIENT = now - 400 * DAY;

/** Written into a --seed-only dir when its seeding is done. */
const DONE = 'seeded-runs';

async function createSchema(dataDir: string): Promise<void> {
  const schema = await createEngine({ dataDir, workflows: [] });
  await schema.start();
  await schema.stop();
}
const seed = (dataFile: string, n: number) => {
  const db = openForSeeding(dataFile);
  seedRuns(db, n, MIX, { timeOf0: TIME_OF_0, spacingMs: SPACING });
  return db;
};
if (seedOnly) {
  const to = arg('dir')!;
  const t = performance.now();
  await createSchema(to);
  closeSeeded(seed(join(to, 'tranquil.db'), Number(seedOnly)));
  writeFileSync(join(to, DONE), seedOnly);
  console.error(`[scale-runs] seeded ${seedOnly} runs into ${to} in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  process.exit(0);
}
/** The size the --prebuilt dir holds, once its seeding finished (waits for it). */
async function prebuiltRuns(): Promise<number> {
  for (;;) {
    try {
      return Number(readFileSync(join(prebuilt!, DONE), 'utf8'));
    } catch {
      await new Promise((r) => setTimeout(r, 5000));
    }
  }
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const resultFile = join(import.meta.dirname, 'results', `${stamp}Z-scale-runs.json`);
const root = mkdtempSync(join(tmpdir(), 'tranquil-scale-runs-'));
const dir = join(root, 'data');
const file = join(dir, 'tranquil.db');
const log = (s: string) => console.error(`[scale-runs ${new Date().toISOString().slice(11, 19)}] ${s}`);

async function child(args: Record<string, unknown>, timeoutMs: number): Promise<Record<string, number>> {
  const s = spawnCompiled('scale-runs-child.ts', { dataDir: dir, retentionMaxAgeMs: MAX_AGE, ...args }, ['--expose-gc']);
  try {
    return (await s.nextJson(timeoutMs)) as Record<string, number>;
  } finally {
    await Promise.race([s.exited, new Promise((r) => setTimeout(r, 10_000))]);
    await stopChild(s);
  }
}

/** Wall time of the real CLI (plain node on dist/cli.js), process start included. */
function cli(args: string[]): number {
  const t = performance.now();
  try {
    execFileSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
  } catch (err) {
    throw new Error(`tranquil ${args.join(' ')}: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`);
  }
  return performance.now() - t;
}

const rows: Record<string, number>[] = [];
function save(): void {
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  const machine = { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, note: 'shared machine: timings noisy, read shapes and ratios' };
  writeFileSync(resultFile, JSON.stringify({ machine, schemaVersion: MIGRATIONS.length, mix: MIX, rows }, null, 1));
  log(`wrote ${resultFile}`);
}

const saved = arg('report');
if (saved) {
  rmSync(root, { recursive: true, force: true });
  report((JSON.parse(readFileSync(saved, 'utf8')) as { rows: Record<string, number>[] }).rows);
  process.exit(0);
}

try {
  await createSchema(dir);
  let seeded = 0;
  for (const n of SIZES) {
    let t = performance.now();
    if (prebuilt && n === Math.max(...SIZES) && (await prebuiltRuns()) === n) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(prebuilt!, dir);
      seeded = n;
    }
    const db = seed(file, n - seeded);
    seeded = n;
    const seedMs = performance.now() - t;
    // The oldest finished runs (not the legacy ones) become eligible for retention.
    const k = Math.min(10_000, n / 2);
    db.prepare(`UPDATE runs SET updated_at = ? WHERE created_seq IN (SELECT created_seq FROM runs INDEXED BY runs_seq WHERE status IN ('succeeded', 'failed') AND workflow <> 'legacy' ORDER BY created_seq LIMIT ?)`).run(ANCIENT, k);
    // A finished run retention keeps (the newest quarter of the file).
    const describeId = (db.prepare(`SELECT run_id FROM runs WHERE created_seq >= ? AND status = 'succeeded' ORDER BY created_seq LIMIT 1`)
      .get(Math.floor(maxSeq(db) * 0.75)) as { run_id: string }).run_id;
    const runsInFile = (db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n;
    closeSeeded(db);
    const bytes = statSync(file).size;
    log(`N=${n}: seeded in ${(seedMs / 1000).toFixed(1)} s; ${runsInFile} runs, ${(bytes / 2 ** 20).toFixed(0)} MiB`);
    const limit = 30 * 60_000;
    const m = await child({ mode: 'measure', describeId }, limit);
    log(`N=${n}: measure ${JSON.stringify(m)}`);
    const clean = await child({ mode: 'crash' }, limit);
    const crash = await child({ mode: 'start' }, limit);
    t = performance.now();
    const dd = ['--data-dir', dir, '--json'];
    const cliMs = {
      cliBaselineMs: cli(['runs', '--help']),
      cliListMs: cli(['runs', 'list', ...dd]),
      cliListFilteredMs: cli(['runs', 'list', '--workflow', 'billing', '--status', 'failed', ...dd]),
      cliListRareMs: cli(['runs', 'list', '--workflow', 'legacy', ...dd]),
      cliDescribeMs: cli(['runs', 'describe', describeId, ...dd]),
    };
    const r = { runsSeeded: n, runsInFile, fileBytes: bytes, bytesPerRun: bytes / runsInFile, seedMs, ...m, startUncheckedMs: m.startMs!, startCleanMs: clean.startMs!, startAfterKillMs: crash.startMs!, ...cliMs };
    delete (r as Record<string, number>).startMs;
    rows.push(r);
    log(`N=${n}: ${JSON.stringify(r)}`);
    save();
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

/** The table (stdout) and the chart of measured rows: after a run, or alone from a saved
 *  result (`--report=<bench/results/...-scale-runs.json>`, e.g. of a run cut short). */
function report(rows: Record<string, number>[]): void {
  const fmt = (v: number | undefined) => (v === undefined ? 'n/a' : v >= 100 ? Math.round(v).toLocaleString('en-US') : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  console.log('| runs in the file | file MiB (bytes/run) | start ms: whole-file check / after clean stop / after SIGKILL | list first page ms | filtered page (billing, failed) ms | workflow with 100 old runs ms | describe ms | new run steps/s | retention runs/s | RSS MiB | CLI ms: list / filtered / legacy / describe (node start ~ `runs --help`) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${fmt(r.runsInFile)} | ${fmt(r.fileBytes! / 2 ** 20)} (${fmt(r.bytesPerRun)}) | ${fmt(r.startUncheckedMs)} / ${fmt(r.startCleanMs)} / ${fmt(r.startAfterKillMs)} | ${fmt(r.listMs)} | ${fmt(r.listFilteredMs)} | ${fmt(r.listRareMs)} | ${fmt(r.describeMs)} | ${fmt(r.stepsPerSec)} | ${fmt(r.retentionRunsPerSec)} | ${fmt(r.rssMiB)} | ${fmt(r.cliListMs)} / ${fmt(r.cliListFilteredMs)} / ${fmt(r.cliListRareMs)} / ${fmt(r.cliDescribeMs)} (${fmt(r.cliBaselineMs)}) |`);
  }
  if (rows.length > 1) {
    const first = rows[0]!;
    // A list page counts from the first size where it is full (100 runs): a shorter page at a
    // small file is cheaper for that reason alone.
    const ratio = (key: string, rowsKey?: string) => {
      const kept = rows.filter((r) => !rowsKey || r[rowsKey] === 100);
      return kept.map((r) => ({ x: r.runsInFile!, y: r[key]! / kept[0]![key]! }));
    };
    const svg = logChart({
      title: 'How cost grows with the runs in the file (SQLite, built engine)',
      subtitle: `each metric over its value at ${fmt(first.runsInFile)} runs (a list page: where first full); flat = 1, dashed grows as N`,
      xLabel: 'runs in the file (log)', yLabel: 'x its value at the smallest file (log)',
      series: [
        { name: 'file bytes', points: ratio('fileBytes') },
        { name: 'start, whole-file check', points: ratio('startUncheckedMs') },
        { name: 'start after SIGKILL', points: ratio('startAfterKillMs') },
        { name: 'list, first page', points: ratio('listMs', 'listRows') },
        { name: 'list, billing+failed', points: ratio('listFilteredMs', 'listFilteredRows') },
        { name: 'list, legacy workflow', points: ratio('listRareMs', 'listRareRows') },
        { name: 'describe', points: ratio('describeMs') },
        { name: 'new run steps/s', points: ratio('stepsPerSec') },
        { name: 'retention runs/s', points: ratio('retentionRunsPerSec') },
        { name: 'RSS', points: ratio('rssMiB') },
        { name: 'grows as N', dashed: true, points: rows.map((r) => ({ x: r.runsInFile!, y: r.runsInFile! / first.runsInFile! })) },
      ],
    });
    // --quick proves the pipeline: its chart goes to TMPDIR, the docs keep the full run's.
    const out = quick ? join(tmpdir(), 'scale-runs-quick.svg') : join(REPO, 'docs', 'bench', 'scale-runs.svg');
    writeFileSync(out, svg);
    log(`wrote ${out}`);
  }
}
report(rows);
