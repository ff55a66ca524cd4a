// `tranquil queues list` leaves out the queues run-level flow control keeps for itself
// (~singleton.<workflow>, ~rate.<workflow>) unless --all, and then labels them.
import { describe, expect, it } from 'vitest';
import { internalQueue, listedQueues, queueLine } from '../../src/domain/internal-queues.ts';
import { rateQueue, singletonQueue } from '../../src/domain/run-flow.ts';

const row = (name: string) => ({ name, running: 1, waiting: 0, limits: { concurrency: 1 } });

describe('internal queues in queues list', () => {
  it('the names run-flow.ts gives are told apart from a user queue', () => {
    expect(internalQueue(singletonQueue('reindex').name)).toEqual({ option: 'runs.singleton', workflow: 'reindex' });
    expect(internalQueue(rateQueue('alert-sms', 3, 1000).name)).toEqual({ option: 'runs.rateLimit', workflow: 'alert-sms' });
    expect(internalQueue('llm')).toBeUndefined();
  });

  it('hidden by default; with --all shown and labelled', () => {
    const rows = [row('llm'), row('~singleton.reindex'), row('~rate.alert-sms')];
    expect(listedQueues(rows, false).map((q) => q.name)).toEqual(['llm']);
    const all = listedQueues(rows, true);
    expect(all.map((q) => q.name)).toEqual(['llm', '~singleton.reindex', '~rate.alert-sms']);
    expect(all.map(queueLine)).toEqual([
      'llm  running 1  waiting 0  limits {"concurrency":1}',
      `~singleton.reindex  running 1  waiting 0  limits {"concurrency":1}  (internal: runs.singleton of workflow 'reindex')`,
      `~rate.alert-sms  running 1  waiting 0  limits {"concurrency":1}  (internal: runs.rateLimit of workflow 'alert-sms')`,
    ]);
  });
});
