// A workflow file's run-level flow control crosses as data (`runs: { queue, singleton: { mode },
// rateLimit: { limit, period } }`, keys and priority made by fromInput('path')); any other key
// or priority function is code the engine would have to run, so describing
// such a file fails in one line naming the option, instead of registering it with the option
// silently ignored.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateFile } from '../../cli/workflow-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-file-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flow = (options: string) => `
import { workflow, manual, queue, fromInput } from '@tranquil/sdk';
void queue;
void fromInput;
export default workflow('flowed', ${options}, (w) => {
  w.trigger(manual());
  w.run(async ({ input }) => input);
});
`;

describe('run-level flow control in a workflow file', () => {
  it('key functions are refused at describe, naming the option; queues, data-only runs, debounce and fromInput() keys are described', async () => {
    writeFileSync(join(dir, 'runs.ts'), flow(`{ runs: { singleton: { mode: 'skip', key: (i) => i.k } } }`));
    writeFileSync(join(dir, 'runkey.ts'), flow(`{ runs: { queue: queue('q', { concurrency: 1 }), key: (i) => i.k } }`));
    writeFileSync(join(dir, 'debounce.ts'), flow(`{ debounce: { period: '5s' } }`));
    writeFileSync(join(dir, 'queues.ts'), flow(`{ queues: [queue('llm', { concurrency: 2 })], runs: { queue: queue('one', { concurrency: 1 }), singleton: { mode: 'skip' }, rateLimit: { limit: 3, period: '1h' } } }`));
    await expect(validateFile(join(dir, 'runs.ts'))).rejects.toThrow(/runs\.ts: could not be described .*workflow 'flowed' options\.runs\.singleton\.key: a workflow file's key and priority are read from the input with fromInput\('path'\)/);
    await expect(validateFile(join(dir, 'runkey.ts'))).rejects.toThrow(/runkey\.ts: could not be described .*workflow 'flowed' options\.runs\.key: a workflow file's key and priority/);
    // A debounce is data too (its key by fromInput); a key function is refused.
    expect((await validateFile(join(dir, 'debounce.ts'))).name).toBe('flowed');
    writeFileSync(join(dir, 'debkey.ts'), flow(`{ debounce: { period: '5s', key: (i) => i.k } }`));
    await expect(validateFile(join(dir, 'debkey.ts'))).rejects.toThrow(/debkey\.ts: could not be described .*workflow 'flowed' options\.debounce\.key: a workflow file's key and priority/);
    expect((await validateFile(join(dir, 'queues.ts'))).name).toBe('flowed');
    // Keys and priority read from the input cross as their paths; a bad path fails in the file.
    writeFileSync(join(dir, 'paths.ts'), flow(`{ runs: { queue: queue('one', { concurrency: 1 }), key: fromInput('tenant'), priority: fromInput('p'), singleton: { mode: 'skip', key: fromInput('user.id') }, rateLimit: { limit: 3, period: '1h', key: fromInput('user.id') } } }`));
    expect((await validateFile(join(dir, 'paths.ts'))).name).toBe('flowed');
    writeFileSync(join(dir, 'badpath.ts'), flow(`{ runs: { singleton: { mode: 'skip', key: fromInput('user..id') } } }`));
    await expect(validateFile(join(dir, 'badpath.ts'))).rejects.toThrow(/badpath\.ts: could not be described .*fromInput\(path\): expected a dot path into the input/);
  }, 60_000);
});
