// One side of the value-codec row (bench/lib/codec.ts): the 100-concurrent workload (10-step
// runs, ~200 B results, SQLite durability full) with the engine's codec as built, or with
// today's JSON encoding put in its place (`legacy`: module hooks, legacy-codec-hooks.mjs).
// Prints { stepsPerS: number[], legacy: boolean } on one line.
import { register } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = JSON.parse(process.argv[2] ?? '{}') as { legacy: boolean; conc: number; runs: number; reps: number };
if (args.legacy) register('./lib/legacy-codec-hooks.mjs', import.meta.url);
const { createEngine } = await import('../compose/index.ts');
const { ALL_WORKFLOWS, STEPS_PER_RUN, tenSteps } = await import('./lib/workflows.ts');
const codec = (await import('../src/domain/value-codec.ts')) as { LEGACY_ENCODING?: boolean };
const { nowMs } = await import('./lib/stats.ts');

const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-codec-'));
const engine = await createEngine({ backend: 'sqlite', dataDir: dir, workflows: ALL_WORKFLOWS, durability: 'full', maxConcurrentRuns: 1000, log: { level: 'silent' } });
await engine.start();
const loop = async (runs: number): Promise<number> => {
  let next = 0;
  const t0 = nowMs();
  const client = async () => {
    while (next < runs) {
      next++;
      const { runId } = await engine.trigger(tenSteps.name, {});
      const v = await engine.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`run ${runId} ended ${v.status}: ${v.error?.message}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.conc, runs) }, client));
  return (runs * STEPS_PER_RUN) / ((nowMs() - t0) / 1000);
};
try {
  await loop(Math.ceil(args.runs / 3)); // warm-up
  const stepsPerS: number[] = [];
  for (let r = 0; r < args.reps; r++) stepsPerS.push(await loop(args.runs));
  process.stdout.write(JSON.stringify({ stepsPerS, legacy: codec.LEGACY_ENCODING === true }) + '\n');
} finally {
  await engine.stop();
  rmSync(dir, { recursive: true, force: true });
}
