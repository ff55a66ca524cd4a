// The plain-workflow loader's errors, exact: each malformed definition gives one line
// `<file>:<line>:<column>: <field path>: <reason>`, before any engine or run exists.
import { describe, expect, it } from 'vitest';
import { loadPlainWorkflow, PlainWorkflowError } from '@tranquil/engine';
import { REFERENCE } from './reference.ts';

/** The reference definition with one edit (the edit must apply). */
function edit(from: string, to: string): string {
  expect(REFERENCE.includes(from), `edit '${from}'`).toBe(true);
  return REFERENCE.replace(from, to);
}

const CASES: [what: string, text: string, message: string][] = [
  ['a bad duration', edit('wait: 48h', 'wait: 48x'),
    "f.yaml:6:11: steps[0].wait: bad duration: '48x' is not a duration (use e.g. '30s', '15m', '48h', '7d')"],
  ['a negative duration', edit('base: 30s', 'base: -30s'),
    "f.yaml:16:50: steps[3].retry.base: bad duration: '-30s' is not a duration (use e.g. '30s', '15m', '48h', '7d')"],
  ['a misspelt step kind', edit('action: app.load_user', 'acton: app.load_user'),
    "f.yaml:8:5: steps[1].acton: unknown key 'acton' (a step needs one of action, wait, condition, invoke, start, result)"],
  ['an unknown key in retry', edit('max: 3,', 'max: 3, tries: 2,'),
    "f.yaml:16:22: steps[3].retry.tries: unknown key 'tries' (allowed here: max, backoff, base, max_delay, jitter, non_retryable)"],
  ['an unknown top-level key', edit('version: 3\n', 'version: 3\nowner: growth\n'),
    "f.yaml:3:1: owner: unknown key 'owner' (allowed here: workflow, version, description, trigger, steps, queues, runs, debounce)"],
  ['an unknown key on an action step', edit('    key: "nudge', '    idempotency: x\n    key: "nudge'),
    "f.yaml:15:5: steps[3].idempotency: unknown key 'idempotency' (allowed here: id, action, input, key, retry, timeout, queue)"],
  ['a duplicate step id', edit('id: nudge', 'id: fetch'),
    "f.yaml:12:9: steps[3].id: duplicate step id 'fetch' (also steps[1])"],
  ['a condition on a step that has not run yet', edit('fetch.activated == false', 'nudge.activated == false'),
    "f.yaml:11:16: steps[2].condition: 'nudge.activated == false' references step 'nudge', which has not run yet at this point"],
  ['a template naming an unknown name', edit('{{ fetch.email }}', '{{ user.email }}'),
    "f.yaml:14:18: steps[3].input.to: 'user.email' references unknown name 'user' (known here: trigger, instance, pause, fetch, gate)"],
  ['a key template naming a later step', edit('nudge/{{ instance.id }}', 'nudge/{{ nudge.id }}'),
    "f.yaml:15:10: steps[3].key: 'nudge.id' references step 'nudge', which has not run yet at this point"],
  ['an unclosed template', edit('{{ fetch.email }}', '{{ fetch.email'),
    "f.yaml:14:18: steps[3].input.to: '{{' at character 1 is not closed by '}}'"],
  ['a condition that is not CEL', edit('fetch.activated == false', 'fetch.activated =='),
    "f.yaml:11:16: steps[2].condition: 'fetch.activated ==' is not a CEL expression: Unexpected token: EOF"],
  ['a version that is not a number', edit('version: 3', 'version: three'),
    'f.yaml:2:10: version: expected a whole number'],
  ['a missing trigger', edit('trigger: user.signed_up\n', ''),
    'f.yaml:1:1: trigger: required: an event name, or a mapping with one of event, schedule, webhook, manual'],
  ['a bad cron', edit('trigger: user.signed_up', 'trigger: { schedule: "61 * * * *" }'),
    "f.yaml:3:10: trigger: schedule(cron): '61 * * * *' is not a cron expression: Constraint error, got value 61 expected range 0-59"],
  ['a duplicate YAML key', edit('version: 3', 'version: 3\nversion: 4'),
    'f.yaml:3:1: not valid YAML: Map keys must be unique'],
  ['a step of two kinds', edit('    wait: 48h', '    wait: 48h\n    condition: "true"'),
    'f.yaml:5:5: steps[0]: a step is one of action, wait, condition, invoke, start, result, not wait and condition'],
  ['an invoke of a workflow name that cannot be one', edit('action: app.load_user', 'invoke: "bad name!"'),
    "f.yaml:8:13: steps[1].invoke: must start with a letter and use letters, digits, _ or -"],
  ['an unknown key on an invoke step', edit('action: app.load_user', 'invoke: users\n    key: x'),
    "f.yaml:9:5: steps[1].key: unknown key 'key' (allowed here: id, invoke, input, timeout, onParentCancel)"],
  ['an invoke with an unknown onParentCancel policy', edit('action: app.load_user', 'invoke: users\n    onParentCancel: detach'),
    "f.yaml:9:21: steps[1].onParentCancel: expected 'cancel' or 'abandon'"],
  ['a reserved step id', edit('id: gate', 'id: trigger'),
    "f.yaml:10:9: steps[2].id: 'trigger' is reserved (expressions use it for the run's trigger)"],
  ['a step id an expression cannot name', edit('id: gate', 'id: the-gate'),
    'f.yaml:10:9: steps[2].id: a step id starts with a letter or _ and has letters, digits and _ only (expressions name steps by id)'],
  ['an unknown backoff', edit('backoff: exponential', 'backoff: quadratic'),
    "f.yaml:16:31: steps[3].retry.backoff: expected 'constant', 'linear' or 'exponential'"],
  ['zero attempts', edit('max: 3', 'max: 0'),
    'f.yaml:16:19: steps[3].retry.max: at least 1'],
  ['no steps', 'workflow: w\nversion: 1\ntrigger: e\nsteps: []\n',
    'f.yaml:4:8: steps: at least one step'],
  ['not a mapping', '- a\n- b\n',
    'f.yaml:1:1: expected a mapping with workflow, version, trigger and steps'],
  ['broken YAML', 'workflow: [\n',
    'f.yaml:2:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]'],
  ['a bad workflow name', edit('workflow: activation_nudge', 'workflow: 9lives'),
    'f.yaml:1:11: workflow: must start with a letter and use letters, digits, _ or -'],
  ['a wait for an event with a bad timeout', edit('    wait: 48h', '    wait: { event: reply, timeout: soon }'),
    "f.yaml:6:36: steps[0].wait.timeout: bad duration: 'soon' is not a duration (use e.g. '30s', '15m', '48h', '7d')"],
  ['a step id CEL already names', edit('id: gate', 'id: int'),
    "f.yaml:10:9: steps[2].id: 'int' is a reserved word of the expression language"],
  ['the same trigger twice', edit('trigger: user.signed_up', 'trigger: [user.signed_up, { event: user.signed_up }]'),
    'f.yaml:3:27: trigger[1]: duplicate trigger event:user.signed_up (also trigger[0])'],
  ['a non-JSON number in input', edit('template: nudge', 'template: .inf'),
    'f.yaml:14:49: steps[3].input.template: Infinity is not a JSON number'],
];

describe('plain workflow loader: malformed definitions, one exact line each', () => {
  it('the reference definition loads as written', () => {
    const d = loadPlainWorkflow(REFERENCE, 'f.yaml');
    expect(d.workflow).toBe('activation_nudge');
    expect(d.version).toBe(3);
    expect(d.versionId).toMatch(/^v3-[0-9a-f]{12}$/);
    expect(d.steps.map((s) => [s.id, s.kind])).toEqual([['pause', 'sleep'], ['fetch', 'action'], ['gate', 'condition'], ['nudge', 'action']]);
  });

  it.each(CASES)('%s', (_what, text, message) => {
    let thrown: unknown;
    try {
      loadPlainWorkflow(text, 'f.yaml');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(PlainWorkflowError);
    expect((thrown as Error).message).toBe(message);
    expect((thrown as Error).message).not.toContain('\n');
  });

  it('the error carries line, column and path as fields', () => {
    try {
      loadPlainWorkflow(edit('wait: 48h', 'wait: 48x'), 'f.yaml');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ name: 'PlainWorkflowError', source: 'f.yaml', line: 6, column: 11, path: 'steps[0].wait' });
    }
  });
});
