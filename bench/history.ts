// npm run bench:history: how cost grows with history. For N = 10^3 .. 10^6 runs already in
// the file (all sleeping until 2036, written straight into the schema the engine created by
// bench/lib/seed-runs.ts),
// an engine in a child process reports start time, RSS, run-start latency and timer wake
// lateness; the file's bytes per run are measured after a VACUUM. Flat or logarithmic in N
// is the goal; linear would be a bug. Writes bench/results/<ISO>-history.json.
// The child runs the production build (dist/, plain node: scripts/build.mjs, rebuilt here
// first); the same child under the tsx dev loader then gives the RSS alongside (rssTsxMiB).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { compiledChild } from './lib/children.ts';
import { closeSeeded, openForSeeding, seedRuns, SLEEPING_ONLY } from './lib/seed-runs.ts';

const SIZES = process.argv.includes('--quick') ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000];
const root = mkdtempSync(join(tmpdir(), 'tranquil-history-'));

async function prepare(n: number): Promise<{ dir: string; bytesPerRun: number }> {
  const dir = join(root, `n${n}`);
  const schema = await createEngine({ dataDir: dir, workflows: [] });
  await schema.start();
  await schema.stop();
  const db = openForSeeding(join(dir, 'tranquil.db'));
  seedRuns(db, n, SLEEPING_ONLY, { timeOf0: Date.now(), spacingMs: 0 });
  db.exec('VACUUM');
  closeSeeded(db);
  return { dir, bytesPerRun: statSync(join(dir, 'tranquil.db')).size / n };
}

const rows: Record<string, number>[] = [];
try {
  for (const n of SIZES) {
    const { dir, bytesPerRun } = await prepare(n);
    const child = (argv: string[]) =>
      JSON.parse(execFileSync(process.execPath, ['--expose-gc', ...argv, dir], { encoding: 'utf8', timeout: 600_000 }).trim().split('\n').pop()!) as Record<string, number>;
    // First open: no clean-stop mark, so the engine checks the whole file (as after a crash).
    const compiled = child([compiledChild('history-child.ts')]);
    // Then on the same file (now N + 260 runs), after that child's clean stop: start time
    // without the whole-file check, and the RSS under the tsx dev loader.
    const tsx = child(['--import', 'tsx', join(import.meta.dirname, 'history-child.ts')]);
    const r = { runsInFile: n, bytesPerRun, ...compiled, startAfterCrashMs: compiled.startMs!, startMs: tsx.startMs!, rssTsxMiB: tsx.rssMiB! };
    rows.push(r);
    console.error(`[history] N=${n}: ${JSON.stringify(r)}`);
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1));
console.log('| runs already in the file | DB bytes per run | engine start (ms): after a clean stop / after a crash (whole-file check) | RSS after start + 260 runs (MiB), dist / under tsx | run start to result, 1 step (ms, median) | wake lateness p50 / max (ms), 200 timers |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${fmt(r.runsInFile!)} | ${fmt(r.bytesPerRun!)} | ${fmt(r.startMs!)} / ${fmt(r.startAfterCrashMs!)} | ${fmt(r.rssMiB!)} / ${fmt(r.rssTsxMiB!)} | ${fmt(r.runStartLatencyMs!)} | ${fmt(r.wakeLatenessP50Ms!)} / ${fmt(r.wakeLatenessMaxMs!)} |`);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', `${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z-history.json`), JSON.stringify({ machine: { node: process.version }, rows }, null, 1));
