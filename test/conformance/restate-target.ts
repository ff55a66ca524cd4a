// The conformance suite's Restate backend, shared by the files that split its cases
// (restate-a.test.ts, restate-b.test.ts: they run at the same time, each ~half as long).
import { createEngine } from '@tranquil/engine';
import type { ConformanceTarget, SuitePart } from './suite.ts';

// A real restate-server (from the pinned npm package) per test, started and stopped by the engine.
export function restateTarget(part: SuitePart): ConformanceTarget {
  return {
    name: 'restate',
    part,
    async makeEngine({ workflows, dataDir }) {
      const engine = await createEngine({ backend: 'restate', dataDir, workflows });
      await engine.start();
      return engine;
    },
  };
}
