// Property: whatever text the loader is fed (random YAML-ish text, random data dumped as
// YAML, mutations of the reference definition), it returns a definition or throws its own
// PlainWorkflowError: never a TypeError, a RangeError or any other error.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadPlainWorkflow, PlainWorkflowError } from '@tranquil/engine';
import { REFERENCE } from './reference.ts';

// Five properties of RUNS each; FUZZ_RUNS=5000 for a long soak.
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

function verdict(text: string): void {
  try {
    loadPlainWorkflow(text, 'fuzz.yaml');
  } catch (err) {
    if (!(err instanceof PlainWorkflowError)) expect.fail(`${(err as Error)?.constructor?.name}: ${(err as Error)?.message}\n--- input ---\n${text}`);
    expect((err as Error).message).toMatch(/^fuzz\.yaml:\d+:\d+: /);
  }
}

const token = fc.constantFrom(
  'workflow', 'version', 'trigger', 'steps', 'id', 'action', 'wait', 'condition', 'input', 'key', 'retry', 'max', 'backoff', 'base',
  'max_delay', 'jitter', 'non_retryable', 'timeout', 'event', 'schedule', 'webhook', 'manual', ':', '- ', '\n', '  ', '{', '}', '[', ']',
  ',', '"', "'", '{{', '}}', '&a', '*a', '!!binary', '!!set', '? ', '|', '>', '#', '48h', '-1s', '3', '1e999', '.nan', 'true', 'null',
  'trigger.x', 'fetch.activated == false', '---', '...', '%YAML 1.2', '<<: *a', '\t', '\u0000', '\uFEFF',
);
const yamlish = fc.array(token, { maxLength: 60 }).map((t) => t.join(''));

const scalar = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('48h', '{{ trigger.a }}', '{{', 'x == 1'));
const data = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.string(), token), tie('node'), { maxKeys: 5 })),
})).node;
const shaped = fc.record(
  {
    workflow: fc.oneof(fc.constantFrom('w', 'a_b', '9x'), scalar),
    version: fc.oneof(fc.integer(), scalar),
    trigger: fc.oneof(scalar, data, fc.constant({ schedule: '0 9 * * *' }), fc.constant([{ webhook: 'p' }, 'e'])),
    steps: fc.oneof(data, fc.array(fc.record({ id: fc.oneof(fc.constantFrom('a', 'b', 'trigger'), scalar), action: fc.oneof(fc.constant('x.y'), scalar), wait: data, condition: scalar, input: data, key: scalar, retry: data }, { requiredKeys: [] }), { maxLength: 4 })),
  },
  { requiredKeys: [] },
);

it(`plain loader: ${RUNS} random texts each, a definition or a PlainWorkflowError`, () => {
  fc.assert(fc.property(fc.string({ maxLength: 300 }), verdict), { numRuns: RUNS });
  fc.assert(fc.property(yamlish, verdict), { numRuns: RUNS });
  fc.assert(fc.property(data, (d) => verdict(stringify(d))), { numRuns: RUNS });
  fc.assert(fc.property(shaped, (d) => verdict(stringify(d))), { numRuns: RUNS });
  // Mutations of the reference: a slice cut out, or random text spliced in.
  fc.assert(
    fc.property(fc.nat(REFERENCE.length), fc.nat(40), yamlish, (at, cut, ins) => verdict(REFERENCE.slice(0, at) + ins + REFERENCE.slice(at + cut))),
    { numRuns: RUNS },
  );
}, 120_000);
