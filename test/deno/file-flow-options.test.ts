// A workflow file's run-level flow control crosses as data (`runs: { queue, singleton: { mode },
// rateLimit: { limit, period } }`); its key and priority functions, and `debounce`, are code
// the engine would have to run: not built for files yet, so describing such a file fails in
// one line naming the option, instead of registering it with the option silently ignored.
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
  it('key functions and debounce are refused at describe, naming the option; queues and data-only runs are described', async () => {
    writeFileSync(join(dir, 'runs.ts'), flow(`{ runs: { singleton: { mode: 'skip', key: (i) => i.k } } }`));
    writeFileSync(join(dir, 'runkey.ts'), flow(`{ runs: { queue: queue('q', { concurrency: 1 }), key: (i) => i.k } }`));
    writeFileSync(join(dir, 'debounce.ts'), flow(`{ debounce: { period: '5s' } }`));
    writeFileSync(join(dir, 'queues.ts'), flow(`{ queues: [queue('llm', { concurrency: 2 })], runs: { queue: queue('one', { concurrency: 1 }), singleton: { mode: 'skip' }, rateLimit: { limit: 3, period: '1h' } } }`));
    await expect(validateFile(join(dir, 'runs.ts'))).rejects.toThrow(/runs\.ts: could not be described .*workflow 'flowed' options\.runs\.singleton\.key: not available in workflow files yet/);
    await expect(validateFile(join(dir, 'runkey.ts'))).rejects.toThrow(/runkey\.ts: could not be described .*workflow 'flowed' options\.runs\.key: not available in workflow files yet/);
    await expect(validateFile(join(dir, 'debounce.ts'))).rejects.toThrow(/debounce\.ts: could not be described .*workflow 'flowed' options\.debounce: not available in workflow files yet/);
    expect((await validateFile(join(dir, 'queues.ts'))).name).toBe('flowed');
  }, 60_000);
});
