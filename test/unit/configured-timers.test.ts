// Every timer the engine arms for a duration the user configures holds for that duration,
// however long (docs/semantics.md, "Durations"): Node's setTimeout/setInterval, and vitest's
// fake timers like them, fire after 1 ms past 2^31-1 ms (24.8 days). Covers the cancel grace
// as RunSession arms it (config cancelGrace; issue 46: the grace of a cancelled run's cleanup
// ended at once), periodic sweeps (config retention.sweepEvery, restate.deploymentSweep, via
// setLongInterval) and a step timeout (withTimeout). The Deno child's kill backstop arms
// grace + slack through setLongTimeout too (src/adapters/deno/step-log-server.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JournalEntry } from '../../src/domain/journal.ts';
import type { StepLog } from '../../src/ports/step-log.ts';
import { MAX_TIMER_MS, setLongInterval } from '../../src/runtime/long-timer.ts';
import type { RunOutcome } from '../../src/runtime/run-outcome.ts';
import { RunSession } from '../../src/runtime/run-session.ts';
import { withTimeout } from '../../src/runtime/with-timeout.ts';

const DAY = 86_400_000;
const T0 = Date.parse('2026-03-01T00:00:00Z');
/** Real turns of the event loop (setImmediate is not faked here). */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

afterEach(() => {
  vi.useRealTimers();
});

/** An in-memory step log of a run whose cancel was requested before this session. */
function cancelledRunLog(): StepLog & { written: JournalEntry[] } {
  const written: JournalEntry[] = [];
  return {
    runId: 'r1',
    workflow: 'wf',
    input: null,
    entries: [],
    written,
    now: () => T0,
    random: () => 0.5,
    attempt: async (_call, _attempt, run) => run(),
    record: async (e) => void written.push(e),
    takeSignal: async () => undefined,
    emit: async () => {},
    cancelRequested: () => false,
    cancelState: () => 'requested',
  };
}

describe('cancel grace past 2^31 ms', () => {
  it('a 30-day grace lets cleanup run past 24.8 days, then ends the run cancelled at 30 days', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log = cancelledRunLog();
    let cleanupStarted = false;
    const session = new RunSession(log, async ({ step }) => {
      try {
        await step.sleep('long', '1d');
      } catch {
        // Cleanup that takes as long as it takes: only the grace ends it.
        await step.do('cleanup', () => ((cleanupStarted = true), new Promise(() => {})));
      }
    }, undefined, { cancelGraceMs: 30 * DAY });
    let outcome: RunOutcome | undefined;
    void session.run().then((o) => (outcome = o));
    for (let i = 0; i < 50 && !cleanupStarted; i++) await turns(1);
    expect(cleanupStarted).toBe(true);
    expect(log.written.find((e) => e.name === 'long')?.error?.name).toBe('CancelledError');
    vi.advanceTimersByTime(MAX_TIMER_MS + 1_000);
    await turns(3);
    expect(outcome).toBeUndefined();
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_MS - 2_000);
    await turns(3);
    expect(outcome).toBeUndefined();
    vi.advanceTimersByTime(1_000);
    await turns(3);
    expect(outcome).toEqual({ type: 'cancelled' });
  });

  it('a clock reading before the recorded delivery never lengthens the grace past its configured length', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // Delivered in an earlier session (the journal says so); this log's clock reads 0, as the
    // simulation's replay check did: 0 + grace - deliveredAt overflowed to 1 ms.
    const log = cancelledRunLog();
    (log as unknown as { entries: JournalEntry[] }).entries = [{ seq: 0, name: 'long', kind: 'sleep', status: 'failed', attempts: 1, endedAt: T0, order: 1, error: { name: 'CancelledError', message: 'run r1 was cancelled' } }];
    log.now = () => 0;
    const session = new RunSession(log, async ({ step }) => {
      try {
        await step.sleep('long', '1d');
      } catch {
        await step.do('cleanup', () => new Promise(() => {}));
      }
    }, undefined, { cancelGraceMs: 5_000 });
    let outcome: RunOutcome | undefined;
    void session.run().then((o) => (outcome = o));
    await turns(5);
    expect(outcome).toBeUndefined();
    vi.advanceTimersByTime(4_999);
    await turns(3);
    expect(outcome).toBeUndefined();
    vi.advanceTimersByTime(1);
    await turns(3);
    expect(outcome).toEqual({ type: 'cancelled' });
  });
});

describe('setLongInterval (sweeps every retention.sweepEvery / restate.deploymentSweep)', () => {
  it('a 30-day period fires every 30 days, not every millisecond', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const stop = setLongInterval(fn, 30 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_MS + 10);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_MS - 10);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(30 * DAY);
    expect(fn).toHaveBeenCalledTimes(2);
    stop();
    vi.advanceTimersByTime(90 * DAY);
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('a short period is a plain interval', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const stop = setLongInterval(fn, 100);
    vi.advanceTimersByTime(350);
    expect(fn).toHaveBeenCalledTimes(3);
    stop();
  });
});

describe('step timeout past 2^31 ms', () => {
  it('a 30-day step timeout does not fail the attempt at 24.8 days, and fails it at 30 days', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let settled: string | undefined;
    void withTimeout(() => new Promise(() => {}), 30 * DAY, 'report', 1).then(
      () => (settled = 'ok'),
      (e: Error) => (settled = e.name),
    );
    vi.advanceTimersByTime(MAX_TIMER_MS + 1_000);
    await turns(2);
    expect(settled).toBeUndefined();
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_MS - 1_000);
    await turns(2);
    expect(settled).toBe('TimeoutError');
  });
});
