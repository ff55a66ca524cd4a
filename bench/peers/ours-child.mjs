// Our side of the peer rows: the engine's production build (dist/, built by the bench before
// it spawns this child), SQLite backend at durability 'full' (a step's commit is fsync'd).
// Usage: node bench/peers/ours-child.mjs '<json args>' (args: bench/peers/shapes.mjs main).
import { createEngine } from '../../dist/index.js';
import { manual, workflow } from '../../dist/sdk.js';
import { main, RESULT } from './shapes.mjs';

const steps = workflow('peer-steps', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const { n, fan } = input;
    if (fan) return (await Promise.all(Array.from({ length: n }, (_, i) => step.do(`item-${i}`, () => RESULT)))).length;
    for (let i = 0; i < n; i++) await step.do(`s${i}`, () => RESULT);
    return n;
  });
});

async function open(a) {
  const engine = await createEngine({ backend: 'sqlite', dataDir: a.store, workflows: [steps], durability: 'full', maxConcurrentRuns: 1000 });
  await engine.start();
  return {
    sys: {
      async run(n, fan) {
        const { runId } = await engine.trigger(steps.name, { n, fan });
        const v = await engine.result(runId, { timeout: '300s' });
        if (v.status !== 'succeeded') throw new Error(`run ${runId} ended ${v.status}: ${v.error?.message}`);
      },
    },
    close: () => engine.stop(),
  };
}

await main(JSON.parse(process.argv[2]), open);
