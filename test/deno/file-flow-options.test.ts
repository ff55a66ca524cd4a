// A workflow file's run-level flow control (`runs`, `debounce`) is code the engine would have
// to run (key functions): not built for files yet, so describing such a file fails in one line
// naming the option, instead of registering it with the option silently ignored. Its step
// queues (`queues`) are described and served (test/conformance/files/queues.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateFile } from '../../cli/workflow-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-file-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flow = (options: string) => `
import { workflow, manual, queue } from '@tranquil/sdk';
void queue;
export default workflow('flowed', ${options}, (w) => {
  w.trigger(manual());
  w.run(async ({ input }) => input);
});
`;

describe('run-level flow control in a workflow file', () => {
  it('runs and debounce are refused at describe, naming the option; queues are described', async () => {
    writeFileSync(join(dir, 'runs.ts'), flow(`{ runs: { singleton: { mode: 'skip' } } }`));
    writeFileSync(join(dir, 'debounce.ts'), flow(`{ debounce: { period: '5s' } }`));
    writeFileSync(join(dir, 'queues.ts'), flow(`{ queues: [queue('llm', { concurrency: 2 })] }`));
    await expect(validateFile(join(dir, 'runs.ts'))).rejects.toThrow(/runs\.ts: could not be described .*workflow 'flowed' options\.runs: not available in workflow files yet/);
    await expect(validateFile(join(dir, 'debounce.ts'))).rejects.toThrow(/debounce\.ts: could not be described .*workflow 'flowed' options\.debounce: not available in workflow files yet/);
    expect((await validateFile(join(dir, 'queues.ts'))).name).toBe('flowed');
  }, 60_000);
});
