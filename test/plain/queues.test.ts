// Flow control in plain-data workflows (docs/plain-workflows.md, Flow control): `queues:`,
// an action step's `queue:` and `runs:` are checked when loaded, one line each naming the
// field, and compile onto the same options a code workflow gives (docs/flow-control.md).
import { describe, expect, it } from 'vitest';
import { loadPlainWorkflow } from '../../src/runtime/plain/load.ts';
import { PlainWorkflowError } from '../../src/runtime/plain/plain-error.ts';
import { plainWorkflow } from '../../src/runtime/plain/plain-workflow.ts';

const def = (queues: string, runs: string, step: string) => `workflow: w
version: 1
trigger: { manual: true }
${queues}${runs}steps:
  - id: call
    action: a.b
${step}`;
const LLM = 'queues:\n  llm: { concurrency: 1 }\n';

const CASES: [string, string, string][] = [
  ['a step queue not declared', def('', '', '    queue: llm\n'), "f.yaml:7:12: steps[0].queue: queue 'llm' is not declared (queues: none)"],
  ['a step queue by { name } not declared', def('queues:\n  other: { concurrency: 1 }\n', '', '    queue: { name: llm }\n'), "f.yaml:9:20: steps[0].queue.name: queue 'llm' is not declared (queues: 'other')"],
  ['a concurrency of 0', def('queues:\n  llm: { concurrency: 0 }\n', '', '    queue: llm\n'), 'f.yaml:5:23: queues.llm.concurrency: at least 1'],
  ['a negative period', def('queues:\n  llm: { rate_limit: { limit: 3, period: -1s } }\n', '', ''), "f.yaml:5:42: queues.llm.rate_limit.period: bad duration: '-1s' is not a duration (use e.g. '30s', '15m', '48h', '7d')"],
  ['a queue with no limit', def('queues:\n  llm: {}\n', '', ''), "f.yaml:5:8: queues.llm: queue 'llm' options: give concurrency, rate_limit or key (a queue without limits limits nothing)"],
  ['a bad queue name', def('queues:\n  9x: { concurrency: 1 }\n', '', ''), 'f.yaml:5:7: queues.9x: must start with a letter and use letters, digits, _ . or -'],
  ['an unknown queue option', def('queues:\n  llm: { concurrency: 1, burst: 2 }\n', '', ''), "f.yaml:5:26: queues.llm.burst: unknown key 'burst' (allowed here: concurrency, rate_limit, key)"],
  ['a step queue that is not a name', def(LLM, '', '    queue: 7\n'), 'f.yaml:9:12: steps[0].queue: expected a queue name, or { name, key }'],
  ['a step queue key naming an unknown name', def(LLM, '', '    queue: { name: llm, key: "{{ user.id }}" }\n'), "f.yaml:9:30: steps[0].queue.key: 'user.id' references unknown name 'user' (known here: trigger, instance)"],
  ['runs.key without runs.queue', def('', 'runs:\n  key: "{{ trigger.u }}"\n  singleton: { mode: skip }\n', ''), "f.yaml:5:8: runs.key: needs runs.queue (the key and priority of a run's queue slot)"],
  ['runs.key naming a step', def(LLM, 'runs:\n  queue: llm\n  key: "{{ call.u }}"\n', ''), "f.yaml:8:8: runs.key: 'call.u' references step 'call', which has not run yet at this point (a run's key or priority sees only trigger: it is decided before the run starts)"],
  ['a singleton mode that is not skip or cancel', def('', 'runs:\n  singleton: { mode: drop }\n', ''), "f.yaml:5:22: runs.singleton.mode: expected 'skip' or 'cancel'"],
  ['runs with nothing in it', def('', 'runs: {}\n', ''), 'f.yaml:4:7: runs: give queue, singleton or rate_limit'],
  ['a run rate limit of 0', def('', 'runs:\n  rate_limit: { limit: 0, period: 1h }\n', ''), 'f.yaml:5:24: runs.rate_limit.limit: at least 1'],
];

describe('plain workflows: flow control', () => {
  it.each(CASES)('%s is refused in one line', (_what, text, message) => {
    let thrown: unknown;
    try {
      loadPlainWorkflow(text, 'f.yaml');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(PlainWorkflowError);
    expect((thrown as Error).message).toBe(message);
  });

  it('compiles onto the options of a code workflow: the queues, and runs with its keys and priority as functions of the input', () => {
    const w = plainWorkflow(def(
      'queues:\n  llm: { concurrency: 2, rate_limit: { limit: 60, period: 1m }, key: { concurrency: 1 } }\n',
      'runs:\n  queue: llm\n  key: "{{ trigger.tenant }}"\n  priority: "{{ trigger.plan == \'pro\' ? 10 : 0 }}"\n  singleton: { key: "{{ trigger.job }}", mode: cancel }\n  rate_limit: { limit: 3, period: 1h, key: "{{ trigger.tenant }}" }\n',
      '    queue: { name: llm, key: "{{ trigger.user }}" }\n',
    ));
    expect(w.queues?.map((q) => [q.name, q.limits])).toEqual([['llm', { concurrency: 2, rate: { limit: 60, periodMs: 60_000 }, key: { concurrency: 1 } }]]);
    const input = { tenant: 'acme', plan: 'pro', job: 'j1' };
    expect(w.runs?.queue?.name).toBe('llm');
    expect(w.runs?.key?.(input)).toBe('acme');
    expect(w.runs?.priority?.(input)).toBe(10);
    expect(w.runs?.priority?.({ ...input, plan: 'free' })).toBe(0);
    expect(w.runs?.singleton).toMatchObject({ mode: 'cancel' });
    expect(w.runs?.singleton?.key?.(input)).toBe('j1');
    expect(w.runs?.rateLimit).toMatchObject({ limit: 3, period: 3_600_000 });
    expect(w.runs?.rateLimit?.key?.(input)).toBe('acme');
    // A missing field throws, which the engine refuses at trigger time naming runs.key.
    expect(() => w.runs?.key?.({})).toThrow(/tenant/);
  });
});
