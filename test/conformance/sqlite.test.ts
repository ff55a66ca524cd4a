import { createEngine } from '@tranquil/engine';
import { runConformance } from './suite.ts';

runConformance({
  name: 'sqlite',
  async makeEngine({ workflows, dataDir }) {
    const engine = await createEngine({ backend: 'sqlite', dataDir, workflows });
    await engine.start();
    return engine;
  },
});
