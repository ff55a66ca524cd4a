// @tranquil/engine as a runnable docs block imports it (test/docs/run-blocks.ts): the real
// exports, except that createEngine gives a test engine (createTestEngine: SQLite in a temp
// data dir, a manual clock) whatever the block's dataDir and backend say, so a block that
// shows `createEngine({ dataDir: '.tranquil' })` runs without touching the repo or waiting.
// Its engine is already started (start() is a no-op); stop() closes it and removes the dir.
import type { Engine, EngineConfig } from '../../../compose/index.ts';
import { createTestEngine } from './testing.ts';

export * from '../../../compose/index.ts';

/** createEngine for docs blocks: a test engine with the block's config (minus dataDir, backend). */
export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  const { dataDir: _dir, backend: _backend, ...rest } = config;
  const t = await createTestEngine(rest);
  return new Proxy(t.engine, {
    get(target, key) {
      if (key === 'start') return async () => {};
      if (key === 'stop') return () => t.close();
      return Reflect.get(target, key, target);
    },
  });
}
