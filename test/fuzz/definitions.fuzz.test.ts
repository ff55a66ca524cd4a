// Fuzz the definition validators: workflow(), the trigger constructors, step options
// (as normalised for step.do), durations and the engine config. Each either returns or
// throws ValidationError naming the field; never a TypeError or a crash.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { event, manual, schedule, webhook, workflow } from '@tranquil/sdk';
import { resolveConfig } from '../../compose/config.ts';
import { normalizeStepOptions, resolveStepOptions } from '../../sdk/step-options.ts';
import { ValidationError } from '../../src/domain/errors.ts';
import { WorkflowRegistry } from '../../src/runtime/registry.ts';
import { anyName, anyValue, undocumented } from './oracle.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const only = [ValidationError];

function verdict(label: string, f: () => unknown): void {
  try {
    f();
  } catch (err) {
    expect(undocumented(err, only), `${label} threw an undocumented error`).toBeUndefined();
  }
}

const cron = fc.oneof(fc.constantFrom('0 9 * * *', '*/5 * * * *', '0 0 31 2 *', '@daily', '* * * * * *', '61 * * * *', 'L W # ?'), anyName);
const durationish = fc.oneof(fc.constantFrom('30s', '1h30m', '250ms', '7d', '1.5h', '-5s', '', '1x', 'Infinity'), fc.double(), fc.integer(), anyValue);
const stepOptions = fc.oneof(
  anyValue,
  fc.record(
    {
      retries: fc.oneof(anyValue, fc.record({ limit: fc.oneof(fc.integer(), anyValue), backoff: fc.oneof(fc.constantFrom('constant', 'linear', 'exponential'), anyValue), delay: durationish, maxDelay: durationish, jitter: anyValue }, { requiredKeys: [] })),
      timeout: durationish,
    },
    { requiredKeys: [] },
  ),
);

it(`definition validators: ${RUNS} random definitions each, ValidationError or a definition`, () => {
  fc.assert(fc.property(anyName, (n) => verdict('event()', () => event(n as string))), { numRuns: RUNS });
  fc.assert(fc.property(cron, anyValue, (c, o) => verdict('schedule()', () => schedule(c as string, o as never))), { numRuns: RUNS });
  fc.assert(
    fc.property(fc.oneof(anyValue, fc.record({ path: anyName, validate: anyValue }, { requiredKeys: [] })), (o) => verdict('webhook()', () => webhook(o as never))),
    { numRuns: RUNS },
  );
  fc.assert(fc.property(anyName, stepOptions, (n, o) => verdict('step options', () => normalizeStepOptions(typeof n === 'string' ? n : 'step', o as never))), { numRuns: RUNS });
  fc.assert(fc.property(stepOptions, stepOptions, (d, o) => verdict('step options over defaults', () => resolveStepOptions('s', d as never, o as never))), { numRuns: RUNS });
  // workflow(name, builder) with a builder that makes random calls on the builder object.
  const builderCall = fc.oneof(
    fc.tuple(fc.constant('trigger'), fc.oneof(anyValue, fc.constantFrom(manual(), event('e'), webhook({ path: 'p' })))),
    fc.tuple(fc.constant('run'), fc.oneof(anyValue, fc.constant(async () => 1))),
    fc.tuple(fc.constant('defaults'), stepOptions),
  );
  fc.assert(
    fc.property(anyName, fc.array(builderCall, { maxLength: 5 }), fc.boolean(), (name, calls, builderIsFn) =>
      verdict('workflow()', () => {
        const def = workflow(name as string, (builderIsFn
          ? (w: Record<string, (v: unknown) => void>) => {
              for (const [m, v] of calls) w[m]!(v);
            }
          : calls[0]?.[1]) as never);
        new WorkflowRegistry([def]);
      }),
    ),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.oneof(anyValue, fc.record({ backend: anyValue, dataDir: anyValue, workflows: anyValue, durability: anyValue, maxConcurrentRuns: anyValue, webhook: anyValue, restate: anyValue }, { requiredKeys: [] })), (c) =>
      verdict('engine config', () => resolveConfig(c, {})),
    ),
    { numRuns: RUNS },
  );
  fc.assert(fc.property(fc.array(anyValue, { maxLength: 3 }), (defs) => verdict('workflows list', () => new WorkflowRegistry(defs))), { numRuns: RUNS });
});
