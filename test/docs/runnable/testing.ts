// @tranquil/engine/testing as a runnable docs block imports it (test/docs/run-blocks.ts): the
// real createTestEngine, each engine it makes remembered so the runner closes those a block
// left open (a block shows usage; it need not tear down).
import { createTestEngine as realCreateTestEngine, type TestEngine, type TestEngineOptions } from '../../../compose/testing.ts';

export * from '../../../compose/testing.ts';

const open = new Set<TestEngine>();

/** createTestEngine, remembered until closed. */
export async function createTestEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  const t = await realCreateTestEngine(options);
  open.add(t);
  const close = t.close;
  t.close = async () => {
    open.delete(t);
    await close();
  };
  return t;
}

/** Closes every test engine a block left open; the runner calls it after each block. */
export async function closeOpenEngines(): Promise<void> {
  for (const t of [...open]) await t.close();
}
