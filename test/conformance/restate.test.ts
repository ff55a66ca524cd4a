import { createEngine } from '@tranquil/engine';
import { runConformance } from './suite.ts';

// A real restate-server (from the pinned npm package) per test, started and stopped by the engine.
runConformance({
  name: 'restate',
  async makeEngine({ workflows, dataDir }) {
    const engine = await createEngine({ backend: 'restate', dataDir, workflows });
    await engine.start();
    return engine;
  },
});
