// Paths in the engine config (dataDir, workflowFiles, plainWorkflows): a NUL byte is refused
// at the config boundary in one line naming the field, instead of a TypeError from deep in fs
// (found by the CLI fuzz: `tranquil run quick --data-dir '\0'`).
import { expect, it } from 'vitest';
import { resolveConfig } from '../../compose/config.ts';
import { ValidationError } from '../../src/domain/errors.ts';

it.each([
  ['dataDir', { dataDir: 'a\0b' }],
  ['workflowFiles', { workflowFiles: ['./x\0.ts'] }],
  ['plainWorkflows', { plainWorkflows: ['\0'] }],
])('a NUL byte in %s is a ValidationError naming it', (field, input) => {
  let err: unknown;
  try {
    resolveConfig(input, {});
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as Error).message).toContain(field);
  expect((err as Error).message).toContain('must not contain a NUL byte');
  expect((err as Error).message.split('\n')).toHaveLength(1);
});

it('ordinary paths pass', () => {
  expect(resolveConfig({ dataDir: './data', workflowFiles: ['./a.ts'] }, {}).dataDir).toBe('./data');
});
