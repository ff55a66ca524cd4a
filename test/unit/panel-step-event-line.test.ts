// The run page's step-event lines (src/adapters/http/panel-live.ts): one per event type, as
// the page lists them (as text) while the run goes.
import { describe, expect, it } from 'vitest';
import { stepEventLine } from '../../src/adapters/http/panel-live.ts';
import { encodeValue } from '../../src/domain/value-codec.ts';
import type { StepEvent } from '../../src/runtime/step-events.ts';

const at = Date.parse('2026-12-04T14:02:11.512Z');
const ev = (e: Partial<StepEvent>): StepEvent => ({ type: 'step.started', runId: 'r1', workflow: 'w', step: 'charge', kind: 'do', at, ...e });

describe('stepEventLine', () => {
  it('says each event type in one line, with its attempt, error, times, key and chunk', () => {
    expect(stepEventLine(ev({ attempt: 1 }))).toBe("14:02:11.512 step.started 'charge' attempt 1");
    expect(stepEventLine(ev({ type: 'step.succeeded', attempt: 2 }))).toBe("14:02:11.512 step.succeeded 'charge' attempt 2");
    expect(stepEventLine(ev({ type: 'step.retrying', attempt: 1, error: { name: 'Error', message: 'remote 503' }, until: at + 30_000 })))
      .toBe("14:02:11.512 step.retrying 'charge' attempt 1 Error: remote 503 next attempt at 2026-12-04T14:02:41.512Z");
    expect(stepEventLine(ev({ type: 'step.failed', attempt: 3, error: { name: 'TerminalError', message: 'card declined' } })))
      .toBe("14:02:11.512 step.failed 'charge' attempt 3 TerminalError: card declined");
    expect(stepEventLine(ev({ type: 'step.sleeping', step: 'nap', kind: 'sleep', until: at + 1000 }))).toBe("14:02:11.512 step.sleeping 'nap' until 2026-12-04T14:02:12.512Z");
    expect(stepEventLine(ev({ type: 'step.waiting', step: 'go', kind: 'wait', until: at + 1000 }))).toBe("14:02:11.512 step.waiting 'go' timeout at 2026-12-04T14:02:12.512Z");
    expect(stepEventLine(ev({ type: 'step.waiting', step: 'go', kind: 'wait' }))).toBe("14:02:11.512 step.waiting 'go'");
    expect(stepEventLine(ev({ type: 'step.signaled', step: 'go', kind: 'wait' }))).toBe("14:02:11.512 step.signaled 'go'");
    expect(stepEventLine(ev({ type: 'state.published', step: 'publish:progress', kind: 'publish', key: 'progress' })))
      .toBe("14:02:11.512 state.published 'publish:progress' key 'progress'");
    expect(stepEventLine(ev({ type: 'stream.chunk', step: 'stream:tokens#4', kind: 'stream', key: 'tokens', offset: 3, chunk: 'the\n' })))
      .toBe(`14:02:11.512 stream.chunk 'stream:tokens#4' #3: "the\\n"`);
    expect(stepEventLine(ev({ type: 'stream.closed', step: 'stream:tokens#5', kind: 'stream', key: 'tokens', offset: 4 })))
      .toBe("14:02:11.512 stream.closed 'stream:tokens#5' after 4 chunk(s)");
  });

  it('gives a chunk that is no string in its readable form, and only its start when long', () => {
    const map = encodeValue(new Map([['a', 1]]), 'chunk').stored;
    expect(stepEventLine(ev({ type: 'stream.chunk', step: 's', kind: 'stream', offset: 0, chunk: map }))).toMatch(/#0: Map/);
    const long = stepEventLine(ev({ type: 'stream.chunk', step: 's', kind: 'stream', offset: 0, chunk: 'x'.repeat(500) }));
    expect(long).toBe(`14:02:11.512 stream.chunk 's' #0: "${'x'.repeat(119)}...`);
  });
  it("shows a body's provisional chunk with its attempt, and a failed attempt's withdrawal", () => {
    expect(stepEventLine(ev({ type: 'stream.provisional', step: 'gen', kind: 'do', key: 'tokens', attempt: 1, offset: 2, chunk: 'to' })))
      .toBe(`14:02:11.512 stream.provisional 'gen' attempt 1 #2: "to"`);
    expect(stepEventLine(ev({ type: 'stream.discarded', step: 'gen', kind: 'do', key: 'tokens', attempt: 1, offset: 3 })))
      .toBe(`14:02:11.512 stream.discarded 'gen' attempt 1 3 chunk(s) withdrawn`);
  });
});
