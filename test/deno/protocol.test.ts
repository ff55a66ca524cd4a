// Frames of the step protocol (src/domain/runner-protocol.ts): bounded lines, zod on receipt.
import { describe, expect, it } from 'vitest';
import { LineSplitter, ProtocolError, childFrameSchema, decodeFrame, encodeFrame, engineFrameSchema, type EngineFrame } from '../../src/domain/runner-protocol.ts';
import { WireLog } from '../../runner/wire-log.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('step protocol frames', () => {
  it('splits lines across chunks', () => {
    const s = new LineSplitter(100, 'child');
    expect(s.push(bytes('{"t":"heart'))).toEqual([]);
    expect(s.push(bytes('beat"}\n{"t":"heartbeat"}\n{"t"'))).toEqual(['{"t":"heartbeat"}', '{"t":"heartbeat"}']);
  });

  it('an oversized frame throws before it is buffered further', () => {
    const s = new LineSplitter(10, 'child');
    expect(() => s.push(bytes('x'.repeat(11)))).toThrow(/oversized frame from the child: over 10 bytes/);
  });

  it('a malformed frame names what was wrong', () => {
    expect(() => decodeFrame(childFrameSchema, 'nope', 'child')).toThrow(ProtocolError);
    expect(() => decodeFrame(childFrameSchema, '{"t":"record","id":1}', 'child')).toThrow(/malformed frame 'record' from the child: entry/);
    expect(() => decodeFrame(childFrameSchema, '{"t":"rm -rf"}', 'child')).toThrow(/malformed frame/);
  });

  it('round-trips a request', () => {
    const f = { t: 'record' as const, id: 3, entry: { seq: 0, name: 'a', kind: 'do' as const, status: 'succeeded' as const, attempts: 1, result: { x: 1 } } };
    expect(decodeFrame(childFrameSchema, encodeFrame(f).trim(), 'child')).toEqual(f);
  });

  it("a pause travels in hello and on replies; the child's log answers the latest; a bad one is refused naming it", async () => {
    const hello = decodeFrame(engineFrameSchema, JSON.stringify({
      t: 'hello', runId: 'r', workflow: 'w', input: null, entries: 0, caps: { open: false, close: false },
      cancel: { requested: false, state: 'none' }, now: 1, maxPayloadBytes: 1000, pause: true,
    }), 'engine') as Extract<EngineFrame, { t: 'hello' }>;
    const sent: unknown[] = [];
    const log = new WireLog(hello, [], (f) => sent.push(f));
    expect(log.pauseRequested()).toBe(true);
    const asked = log.record({ seq: 0, name: 'a', kind: 'do', status: 'succeeded', attempts: 1 });
    log.receive(decodeFrame(engineFrameSchema, '{"t":"reply","id":1,"now":2,"ok":true,"pause":false}', 'engine'));
    await asked;
    expect(log.pauseRequested()).toBe(false);
    expect(() => decodeFrame(engineFrameSchema, '{"t":"reply","id":2,"now":2,"ok":true,"pause":"yes"}', 'engine')).toThrow(/malformed frame 'reply' from the engine: pause/);
  });

  it('a pushed pause frame sets what the log answers, with no request in flight; the child cannot send one', () => {
    const hello = decodeFrame(engineFrameSchema, JSON.stringify({
      t: 'hello', runId: 'r', workflow: 'w', input: null, entries: 0, caps: { open: false, close: false },
      cancel: { requested: false, state: 'none' }, now: 1, maxPayloadBytes: 1000,
    }), 'engine') as Extract<EngineFrame, { t: 'hello' }>;
    const log = new WireLog(hello, [], () => {});
    expect(log.pauseRequested()).toBe(false);
    log.receive(decodeFrame(engineFrameSchema, '{"t":"pause","pause":true}', 'engine'));
    expect(log.pauseRequested()).toBe(true);
    log.receive(decodeFrame(engineFrameSchema, '{"t":"pause","pause":false}', 'engine'));
    expect(log.pauseRequested()).toBe(false);
    expect(() => decodeFrame(engineFrameSchema, '{"t":"pause"}', 'engine')).toThrow(/malformed frame 'pause' from the engine: pause/);
    // Engine to child only: a child that sends one (to unpause itself, say) breaks the protocol.
    expect(() => decodeFrame(childFrameSchema, '{"t":"pause","pause":false}', 'child')).toThrow(/malformed frame/);
  });
});
