// The conformance suite's Restate backend, shared by the files that split its cases
// (restate-a.test.ts, restate-b.test.ts: they run at the same time, each ~half as long).
import { createEngine } from '@tranquil/engine';
import type { ConformanceTarget, SuitePart } from './suite.ts';
import { PrewarmedDirs, warmRestate } from './restate-prewarm.ts';

// A real restate-server (from the pinned npm package) per test, stopped by the engine; the
// next case's server starts while a case runs (restate-prewarm.ts), a restart spawns its own.
export function restateTarget(part: SuitePart): ConformanceTarget {
  const dirs = new PrewarmedDirs('tranquil-conf-restate-');
  return {
    name: 'restate',
    part,
    freshDir: warmRestate ? () => dirs.take() : undefined,
    releaseDir: (dir) => dirs.release(dir),
    dispose: () => dirs.dispose(),
    async makeEngine({ workflows, dataDir, liveAcrossReplicas }) {
      const engine = await createEngine({ backend: 'restate', dataDir, workflows, ...(liveAcrossReplicas ? { restate: { liveAcrossReplicas } } : {}) });
      await engine.start();
      return engine;
    },
  };
}
