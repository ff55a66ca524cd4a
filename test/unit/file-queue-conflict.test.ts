// Registration of workflow files whose queues conflict with the app's (src/runtime/registry.ts):
// the file alone is refused, in one line; the code workflows and the other files register.
import { describe, expect, it } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import { WorkflowRegistry, type FileDescription } from '../../src/runtime/registry.ts';
import { ValidationError } from '../../src/domain/errors.ts';
import { queueSpecsOf } from '../../src/runtime/queues.ts';

const file = (name: string, limit: number, digest = 'd1'): FileDescription => ({
  file: { path: `/srv/${name}.ts`, digest, permissions: {} }, name, triggers: [manual()], stepDefaults: {},
  queues: [queue('llm', { concurrency: limit })],
});
const app = workflow('app', { queues: [queue('llm', { concurrency: 2 })] }, (w) => {
  w.trigger(manual());
  w.run(() => null);
});

describe('a workflow file with a conflicting queue', () => {
  it('is refused alone; a file with the same limits and the app register; the executor sees one definition', () => {
    const r = new WorkflowRegistry([app], [file('greedy', 1000), file('fair', 2)]);
    expect(r.all().map((w) => w.definition.name)).toEqual(['app', 'fair']);
    const line = "workflow file /srv/greedy.ts: workflow 'greedy' is not registered: it defines queue 'llm' with limits {\"concurrency\":1000}, but workflow 'app' defines it with {\"concurrency\":2} (a file shares a queue by declaring the same limits)";
    expect(r.refused).toEqual([{ name: 'greedy', path: '/srv/greedy.ts', reason: line }]);
    expect(() => r.get('greedy')).toThrow(new ValidationError(line));
    expect(queueSpecsOf(r.all().map((w) => w.definition)).map((q) => q.limits)).toEqual([{ concurrency: 2 }]);
  });

  it('between two files: the later one is refused, naming the earlier', () => {
    const r = new WorkflowRegistry([], [file('first', 3), file('second', 4)]);
    expect(r.refused.map((x) => x.reason)).toEqual([expect.stringContaining("workflow 'second' is not registered: it defines queue 'llm' with limits {\"concurrency\":4}, but workflow 'first' defines it with {\"concurrency\":3}")]);
  });

  it('a registered file changed on disk to a conflicting queue keeps its registered version', () => {
    const r = new WorkflowRegistry([app], [file('fair', 2)]);
    expect(() => r.replaceFile(file('fair', 50, 'd2'))).toThrow("workflow file /srv/fair.ts: workflow 'fair' keeps its registered version: it defines queue 'llm' with limits {\"concurrency\":50}, but workflow 'app' defines it with {\"concurrency\":2}");
    expect(r.get('fair').version).toBe('d1');
    expect(r.replaceFile(file('fair', 2, 'd3')).version).toBe('d3');
  });
});
