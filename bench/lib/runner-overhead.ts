// The Deno runner's cost (issue 11; docs/runner.md, Measured), measured in the worker of a
// SQLite backend, samples interleaved so that each pair shares the machine's load:
//   bareMs     `deno run --no-config <empty file>`: the floor any Deno child pays;
//   loadMs     the same child a run spawns (its flags, the snapshot's run.ts) without a
//              token: loading the sdk, RunSession, the protocol and zod, then exit 2;
//   perRunMs   trigger to result of a one-step workflow file (approved), the runner as
//              configured by default: the execution takes the warm child its version's
//              previous execution left (loaded and authenticated: docs/runner.md, Warm
//              children), so this is the socket's hello, the journal round trips and the exit;
//   coldRunMs  the same with `deno.warmIdle: 0`: every execution spawns and loads its child;
//   ratio, coldRatio   perRunMs (coldRunMs) / bareMs per pair (target <= 1.5);
// After each run the bench waits for the next warm child to be loaded before it times the
// next bare `deno run`, so that the two never share the CPU.
//   tenStepsPerS  steps/s of a 10-step workflow file, one run at a time.
//   loadSandboxedMs  the same child load as loadMs, spawned exactly as the runner spawns it
//              under the OS sandbox (bubblewrap and the memory cap: confine.ts), interleaved
//              with loadMs (issue 36); n/a where bwrap is missing.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../compose/index.ts';
import { findDeno } from '../../src/adapters/deno/binary.ts';
import { describeFlags } from '../../src/domain/permissions.ts';
import { childCommand, DEFAULT_CHILD_MEMORY_MIB, detectConfinement, engineDirs } from '../../src/adapters/deno/confine.ts';
import { childPackageDirs } from '../../src/adapters/deno/snapshot.ts';
import type { Fig } from './report.ts';
import { nowMs, sleep, summarize } from './stats.ts';

function fig(samples: number[], unit: string): Fig {
  const s = summarize(samples);
  return { median: s.median, min: s.min, max: s.max, n: s.n, unit, samples: samples.map((x) => Number(x.toFixed(3))) };
}

const ONE_STEP = `import { workflow, manual } from '@tranquil/sdk';
export default workflow('bench-file-one', (w) => { w.trigger(manual()); w.run(async ({ step }) => step.do('one', () => 1)); });
`;
const TEN_STEPS = `import { workflow, manual } from '@tranquil/sdk';
export default workflow('bench-file-ten', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => { let n = 0; for (let i = 0; i < 10; i++) n = await step.do('s' + i, () => n + 1); return n; });
});
`;

/** Wall time of one process from spawn to exit. */
function timed(bin: string, args: string[], env: Record<string, string>, cwd: string, infoFd = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = nowMs();
    // bwrap writes deno's pid to fd 3 (confine.ts), as the runner reads it; its own errors
    // go to stderr ("bwrap: ..."): a sandbox that did not start is not a sample.
    const p = spawn(bin, args, { env, cwd, stdio: infoFd ? ['ignore', 'ignore', 'pipe', 'pipe'] : 'ignore' });
    let err = '';
    p.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
    p.once('error', reject);
    p.once('close', () => (err.startsWith('bwrap:') ? reject(new Error(err.trim())) : resolve(nowMs() - t)));
  });
}

export async function benchRunner(
  spec: { durability: 'full' | 'normal' },
  o: { reps: number; warmup: number; tenRuns: number; dataDir: () => string; log: (...a: unknown[]) => void },
): Promise<Record<string, unknown>> {
  const dir = o.dataDir();
  const files = join(dir, 'files');
  mkdirSync(files, { recursive: true });
  writeFileSync(join(files, 'one.ts'), ONE_STEP);
  writeFileSync(join(files, 'ten.ts'), TEN_STEPS);
  writeFileSync(join(files, 'empty.ts'), '');
  const dataDir = join(dir, 'data');
  const engine = await createEngine({ dataDir, durability: spec.durability, workflowFiles: [join(files, 'one.ts'), join(files, 'ten.ts')], log: { level: 'silent' } });
  await engine.start();
  // The same files in another data dir, without warm children.
  const coldEngine = await createEngine({ dataDir: join(dir, 'cold'), durability: spec.durability, workflowFiles: [join(files, 'one.ts')], log: { level: 'silent' }, deno: { warmIdle: 0 } });
  await coldEngine.start();
  try {
    await coldEngine.workflows.approve('bench-file-one');
    await engine.workflows.approve('bench-file-one');
    await engine.workflows.approve('bench-file-ten');
    const deno = findDeno();
    const env = { DENO_DIR: join(dataDir, 'runner', 'deno-dir'), NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' };
    const version = engine.registry.get('bench-file-one').version;
    const snap = join(dataDir, 'runner', 'snapshots', version);
    const loadArgs = ['run', ...describeFlags(join(dataDir, 'runner', 'import-map.json')), join(snap, 'run.ts'), '1', '1'];
    const bareArgs = ['run', '--no-config', join(files, 'empty.ts')];
    const confinement = detectConfinement();
    const importMap = join(dataDir, 'runner', 'import-map.json');
    const boxed = childCommand(confinement, { binary: deno, denoDir: env.DENO_DIR, snapshotDir: snap, engine: engineDirs(join(import.meta.dirname, '../..'), childPackageDirs(), importMap), read: [], write: [], net: false },
      ['run', `--v8-flags=--max-old-space-size=${DEFAULT_CHILD_MEMORY_MIB}`, ...loadArgs.slice(1)], DEFAULT_CHILD_MEMORY_MIB);
    const oneRun = async (e = engine) => {
      const t = nowMs();
      const { runId } = await e.trigger('bench-file-one', null);
      const v = await e.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`file run ${runId} ended ${v.status}: ${v.error?.message}`);
      return nowMs() - t;
    };
    let settle = 1_000;
    for (let i = 0; i < o.warmup; i++) {
      await timed(deno, bareArgs, env, files);
      settle = Math.max(settle, 2 * (await timed(deno, loadArgs, env, snap)));
      await oneRun(coldEngine);
      await oneRun();
      await sleep(settle);
    }
    const bare: number[] = [];
    const load: number[] = [];
    const run: number[] = [];
    const cold: number[] = [];
    const ratio: number[] = [];
    const coldRatio: number[] = [];
    const loadBoxed: number[] = [];
    for (let i = 0; i < o.reps; i++) {
      const b = await timed(deno, bareArgs, env, files);
      load.push(await timed(deno, loadArgs, env, snap));
      if (confinement.kind === 'bwrap') loadBoxed.push(await timed(boxed.file, boxed.args, env, snap, true));
      const c = await oneRun(coldEngine);
      const r = await oneRun();
      bare.push(b);
      run.push(r);
      cold.push(c);
      ratio.push(r / b);
      coldRatio.push(c / b);
      await sleep(settle); // the warm child for the next run loads alone
    }
    const ten: number[] = [];
    for (let i = 0; i < o.tenRuns; i++) {
      const t = nowMs();
      const { runId } = await engine.trigger('bench-file-ten', null);
      const v = await engine.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`file run ${runId} ended ${v.status}: ${v.error?.message}`);
      ten.push(10 / ((nowMs() - t) / 1000));
    }
    const out = {
      bareMs: fig(bare, 'ms'), loadMs: fig(load, 'ms'), perRunMs: fig(run, 'ms'), ratio: fig(ratio, 'x'),
      coldRunMs: fig(cold, 'ms'), coldRatio: fig(coldRatio, 'x'), tenStepsPerS: fig(ten, 'steps/s'),
      loadSandboxedMs: confinement.kind === 'bwrap' ? fig(loadBoxed, 'ms') : { na: confinement.why },
    };
    o.log(`runner: bare deno ${out.bareMs.median?.toFixed(0)} ms, child load ${out.loadMs.median?.toFixed(0)} ms, one-step file run ${out.perRunMs.median?.toFixed(0)} ms (x${out.ratio.median?.toFixed(2)}), cold ${out.coldRunMs.median?.toFixed(0)} ms (x${out.coldRatio.median?.toFixed(2)}), 10-step file ${out.tenStepsPerS.median?.toFixed(1)} steps/s, child load under bwrap ${'median' in out.loadSandboxedMs ? `${out.loadSandboxedMs.median?.toFixed(0)} ms` : `n/a (${out.loadSandboxedMs.na})`}`);
    return out;
  } finally {
    await engine.stop();
    await coldEngine.stop();
  }
}
