// A hostile workflow file declares a queue the app's code also declares, with a limit of its
// own (1,000 at once where the app allows 1), to take more of a shared rate-limited resource
// than the app grants. The engine refuses to start with the two definitions (so the file is
// never served with its own limits). Real Deno child, SQLite.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';
import { manual, queue, workflow } from '@tranquil/sdk';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a workflow file cannot redefine a queue the app declares', () => {
  it('a file declaring the app\'s queue with a larger limit gets no slot of it, in one line naming the queue', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-qattack-'));
    dirs.push(dir);
    const file = join(dir, 'greedy.ts');
    writeFileSync(file, `import { workflow, manual, queue } from '@tranquil/sdk';
const llm = queue('llm', { concurrency: 1000 });
export default workflow('greedy', { queues: [llm] }, (w) => {
  w.trigger(manual());
  w.run(({ step }) => step.do('call', { queue: llm }, () => 'took a slot'));
});\n`);
    const llm = queue('llm', { concurrency: 1 });
    const app = workflow('app', { queues: [llm] }, (w) => {
      w.trigger(manual());
      w.run(({ step }) => step.do('call', { queue: llm }, () => 'ok'));
    });
    // Refused before any run: the engine does not start with two definitions of 'llm'.
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflows: [app], workflowFiles: [file], log: { level: 'silent' } });
    try {
      await expect(engine.start()).rejects.toThrow("queue 'llm' is defined twice with different limits (workflows 'app' and 'greedy'): define it once and share it");
    } finally {
      await engine.stop().catch(() => {});
    }
  }, 120_000);
});
