// runs.singleton `cancel` on Restate (src/adapters/restate/singleton-cancel.ts): a cancel
// that fails for a moment is tried again instead of being dropped (the old run then kept
// its key and the burst's survivor waited behind it for good).
import { describe, expect, it } from 'vitest';
import { RunStateError } from '../../src/domain/errors.ts';
import { cancelEach } from '../../src/adapters/restate/singleton-cancel.ts';

describe('singleton cancel of the runs before', () => {
  it('tries a cancel that failed for a moment again until it goes through', async () => {
    const calls: string[] = [];
    await cancelEach(['r1', 'r2'], async (id) => {
      calls.push(id);
      if (id === 'r1' && calls.filter((c) => c === 'r1').length < 3) throw new RunStateError('run r1 is not yet accepted by Restate; try again');
    });
    expect(calls.filter((c) => c === 'r1')).toHaveLength(3);
    expect(calls.filter((c) => c === 'r2')).toHaveLength(1);
  });

  it('takes a run that already ended as done', async () => {
    let n = 0;
    await cancelEach(['r1'], async () => {
      n++;
      throw new RunStateError('run r1 already finished (succeeded); nothing to cancel');
    });
    expect(n).toBe(1);
  });

  it('gives the error back once its patience is spent', async () => {
    await expect(cancelEach(['r1'], async () => {
      throw new Error('restate refused to cancel run r1 (503)');
    }, 300)).rejects.toThrow('restate refused to cancel run r1 (503)');
  });
});
