// Fuzz the CLI's argument parsing and commands in-process (cli/program.ts): random argv
// built from the real commands and flags plus junk. Every run ends normally, or with a
// commander usage error, or with a documented engine error (the one line `tranquil:` prints);
// never a TypeError or an unhandled rejection. `serve` is left out: it runs until a signal.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError, type Command } from 'commander';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { buildProgram } from '../../cli/program.ts';
import { undocumented } from './oracle.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 600);
const root = mkdtempSync(join(tmpdir(), 'tranquil-cli-fuzz-'));
const flows = join(root, 'flows');
const cwd = process.cwd();
const savedDataDir = process.env.TRANQUIL_DATA_DIR;

beforeAll(() => {
  mkdirSync(flows);
  // --workflows <dir> is a directory of workflow files (one default export each), run by the
  // Deno runner; unapproved, their runs are created blocked (no child runs them).
  writeFileSync(join(flows, 'quick.ts'), `import { event, manual, workflow } from '@tranquil/sdk';
export default workflow('quick', (w) => { w.trigger(manual()); w.trigger(event('go')); w.run(async ({ input, step }) => step.do('echo', () => input)); });
`);
  writeFileSync(join(flows, 'waits.ts'), `import { manual, workflow } from '@tranquil/sdk';
export default workflow('waits', (w) => { w.trigger(manual()); w.run(async ({ step }) => step.waitForEvent('ok', { timeout: '1h' })); });
`);
  process.chdir(root); // relative --data-dir values land here, not in the repo
  process.env.TRANQUIL_DATA_DIR = join(root, 'data');
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterAll(() => {
  process.chdir(cwd);
  if (savedDataDir === undefined) delete process.env.TRANQUIL_DATA_DIR;
  else process.env.TRANQUIL_DATA_DIR = savedDataDir;
  vi.restoreAllMocks();
  rmSync(root, { recursive: true, force: true });
});

const junk = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', '-', '--', '---x', '-x', '--json=1', '\u0000', 'NaN', '-1', '1e9', '{', '{"a":1}', 'null'));
const word = fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,10}$/), junk);
const commands = fc.constantFrom(
  ['run', 'quick'], ['run', 'waits'], ['run'], ['emit', 'go'], ['emit'], ['signal', 'r1', 'ok'], ['signal'], ['runs', 'list'], ['runs', 'describe', 'r1'],
  ['runs', 'cancel', 'r1'], ['runs', 'retry', 'r1'], ['runs'], ['runs', 'state', 'r1'], ['runs', 'state', 'r1', 'progress'], ['runs', 'stream', 'r1', 'tokens'], ['why', 'r1'], ['why', 'quick'], ['workflows', 'list'], ['events', 'list'], ['help'], ['bogus'], [],
);
const flag = fc.oneof(
  fc.constantFrom(['--json'], ['--unmatched'], ['--help'], ['--version'], ['--workflows', flows], ['--data-dir', join(root, 'data')], ['--data-dir', 'elsewhere']),
  fc.tuple(fc.constantFrom('--input', '--data'), fc.oneof(fc.json(), junk)),
  fc.tuple(fc.constantFrom('--id', '--run-id', '--name', '--workflow', '--cursor'), fc.oneof(fc.constantFrom('r1', 'evt-1'), word)),
  fc.tuple(fc.constantFrom('--status'), fc.oneof(fc.constantFrom('failed', 'waiting', 'nope'), word)),
  fc.tuple(fc.constantFrom('--limit', '--wait', '--grace', '--from'), fc.oneof(fc.constantFrom('0', '5', '-3', '1.5', 'x'), fc.integer({ min: 0, max: 50 }).map(String))),
  fc.tuple(fc.constantFrom('--config', '--workflows', '--data-dir'), word),
  fc.tuple(word),
);
const argv = fc.tuple(commands, fc.array(flag, { maxLength: 4 }), fc.boolean()).map(([cmd, flags, withFlows]) => [
  ...cmd,
  ...flags.flat(),
  // Most runs can find the workflows, so mutating commands get past "no workflows".
  ...(withFlows && !flags.some((f) => f[0] === '--workflows' || f[0] === '--config') ? ['--workflows', flows] : []),
]);

function quiet(c: Command): void {
  c.exitOverride();
  c.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
  for (const sub of c.commands) quiet(sub);
}

it(`CLI: ${RUNS} random command lines, usage errors or documented errors only`, async () => {
  const outcomes: Record<string, number> = {};
  await fc.assert(
    fc.asyncProperty(argv, async (args) => {
      const program = buildProgram();
      quiet(program);
      try {
        await program.parseAsync(['node', 'tranquil', ...args]);
        outcomes.ok = (outcomes.ok ?? 0) + 1;
      } catch (err) {
        if (err instanceof CommanderError) {
          outcomes[err.code] = (outcomes[err.code] ?? 0) + 1;
          return;
        }
        const bad = undocumented(err);
        expect(bad, `tranquil ${args.join(' ')}`).toBeUndefined();
        const name = (err as Error).name;
        outcomes[name] = (outcomes[name] ?? 0) + 1;
      }
    }),
    { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
  );
  console.info(`CLI fuzz: ${RUNS} command lines: ${JSON.stringify(outcomes)}`);
}, 180_000);
