// The child's side of a file's run log line (runner/wire-run-log.ts) and the shared rules
// (src/domain/run-log-line.ts): what the child sends always passes the engine's check.
import { describe, expect, it } from 'vitest';
import { MAX_RUN_LOG_LINE_BYTES, plainFields, reservedKeyIn, runLogFrameSchema, type RunLogFrame } from '../../src/domain/run-log-line.ts';
import { wireRunLog } from '../../runner/wire-run-log.ts';

const sent = (lowest: 'debug' | 'info' | 'warn' | 'error' = 'debug') => {
  const frames: RunLogFrame[] = [];
  return { frames, out: wireRunLog(lowest, (f) => frames.push(f))! };
};
const bytes = (f: RunLogFrame) => new TextEncoder().encode(JSON.stringify(f)).length;

describe('run log lines of a workflow file', () => {
  it('sends level, message, plain fields and a body line\'s step; nothing when the engine writes none', () => {
    expect(wireRunLog(undefined, () => {})).toBeUndefined();
    const { frames, out } = sent('info');
    expect(out.enabled('debug')).toBe(false);
    expect(out.enabled('warn')).toBe(true);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    out.write({ time: 0, level: 'info', message: 'hi', runId: 'r', workflow: 'w', step: 'charge', attempt: 2, fields: { n: 10n, c: cyclic, ok: true } });
    expect(frames).toEqual([{ t: 'runLog', level: 'info', message: 'hi', step: { name: 'charge', attempt: 2 }, fields: { n: '10', c: '[not JSON]', ok: true } }]);
    expect(runLogFrameSchema.safeParse(frames[0]).success).toBe(true);
  });

  it('a line over the bound loses its fields, then its message is cut; the line says so and passes the check', () => {
    const { frames, out } = sent();
    out.write({ time: 0, level: 'info', message: 'short', runId: 'r', workflow: 'w', fields: { blob: 'x'.repeat(20_000) } });
    out.write({ time: 0, level: 'info', message: '"'.repeat(20_000), runId: 'r', workflow: 'w' });
    expect(frames[0]!.fields).toBeUndefined();
    expect(frames[0]!.message).toMatch(/^short \[fields dropped: the line was \d+ bytes, over 16384\]$/);
    expect(frames[1]!.message).toMatch(/\[cut: the line was \d+ bytes, over 16384\]$/);
    for (const f of frames) expect(bytes(f)).toBeLessThanOrEqual(MAX_RUN_LOG_LINE_BYTES);
  });

  it('the engine\'s check refuses other keys, a bad level and trace-id fields', () => {
    expect(runLogFrameSchema.safeParse({ t: 'runLog', level: 'info', message: 'm', runId: 'victim' }).success).toBe(false);
    expect(runLogFrameSchema.safeParse({ t: 'runLog', level: 'loud', message: 'm' }).success).toBe(false);
    expect(runLogFrameSchema.safeParse({ t: 'runLog', level: 'info', message: 'm', step: { name: 's', attempt: 1, runId: 'x' } }).success).toBe(false);
    expect(reservedKeyIn({ trace_id: 'f' })).toBe('trace_id');
    expect(reservedKeyIn({ attempt: 1, runId: 'child' })).toBeUndefined();
    expect(plainFields({ d: new Date(0) })).toEqual({ d: '1970-01-01T00:00:00.000Z' });
  });
});
