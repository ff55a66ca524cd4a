// The 100-concurrent workload alone, for `node --import tsx --cpu-prof bench/profile-100.ts '<json>'`.
// { dataDir, runs, durability }: 100 clients, each trigger -> result of a 10 x step.do run.
import { createEngine } from '../compose/index.ts';
import { rmSync } from 'node:fs';
import { tenSteps, STEPS_PER_RUN } from './lib/workflows.ts';

const a = JSON.parse(process.argv[2]!) as { dataDir: string; runs: number; durability: 'full' | 'normal' };
const engine = await createEngine({ backend: 'sqlite', dataDir: a.dataDir, workflows: [tenSteps], durability: a.durability, maxConcurrentRuns: 1000 });
await engine.start();
let next = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: 100 }, async () => {
    while (next < a.runs) {
      next++;
      const { runId } = await engine.trigger(tenSteps.name, {});
      await engine.result(runId, { timeout: '120s' });
    }
  }),
);
const s = (performance.now() - t0) / 1000;
await engine.stop();
rmSync(a.dataDir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ runs: a.runs, concurrency: 100, durability: a.durability, stepsPerS: Math.round((a.runs * STEPS_PER_RUN) / s), note: 'under --cpu-prof (slower than unprofiled)' }) + '\n');
