// A step body's stream writer (src/runtime/body-streams.ts): each chunk goes out at once and is
// held for the result; a refused chunk, one past the payload limit, or one after the attempt
// ended is refused in one line and holds nothing; a failed attempt reports its discarded counts.
import { describe, expect, it } from 'vitest';
import { AttemptStreams, type BodyStreamHost } from '../../src/runtime/body-streams.ts';

function host(maxPayloadBytes = 1_000) {
  const told: string[] = [];
  const h: BodyStreamHost = {
    maxPayloadBytes,
    bodyChunk: (step, attempt, name, index, chunk) => void told.push(`chunk ${step}#${attempt} ${name}[${index}]=${JSON.stringify(chunk)}`),
    bodyEnded: (step, attempt, discarded) => void told.push(`ended ${step}#${attempt} ${discarded ? JSON.stringify([...discarded]) : 'ok'}`),
  };
  return { h, told };
}

describe('a step body\'s stream writer', () => {
  it('sends each chunk at once, numbered per stream, and holds them in order for the result', () => {
    const { h, told } = host();
    const s = new AttemptStreams(h, 'gen', 2);
    s.writer('a').write('x');
    s.writer('b').write(new Date(0));
    s.writer('a').write(undefined);
    expect(s.chunks.map(([n]) => n)).toEqual(['a', 'b', 'a']);
    expect(told[0]).toBe('chunk gen#2 a[0]="x"');
    expect(told[2]).toBe('chunk gen#2 a[1]=null');
    s.end(true);
    expect(told.at(-1)).toBe('ended gen#2 ok');
  });

  it('refuses in one line what it cannot keep, what passes the payload limit, and any write after the attempt', () => {
    const { h, told } = host(60);
    const s = new AttemptStreams(h, 'gen', 1);
    const out = s.writer('t');
    expect(() => out.write(() => 1)).toThrow(/^info\.stream\('t'\) chunk.*function/);
    out.write('0123456789');
    expect(() => out.write('x'.repeat(50))).toThrow("info.stream('t'): the chunks step 'gen' wrote would be over the payload limit of 60 bytes (engine config maxPayloadBytes)");
    expect(s.chunks).toEqual([['t', '0123456789']]);
    expect(() => s.writer('bad#name')).toThrow(/^info\.stream name: no control characters and no '#'$/);
    s.end(false);
    expect(told.at(-1)).toBe('ended gen#1 [["t",1]]');
    expect(() => out.write('late')).toThrow("info.stream('t'): attempt 1 of step 'gen' is over; nothing more can be written from it");
    expect(s.chunks).toHaveLength(1);
  });
});
