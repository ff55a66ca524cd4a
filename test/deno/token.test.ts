// The step listener's authentication (src/adapters/deno/step-listener.ts): a forged, reused
// or expired token is refused and the connection closed before any frame is read.
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { StepListener } from '../../src/adapters/deno/step-listener.ts';

const listeners: StepListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close();
});

async function listener(o?: { tokenTtlMs?: number }): Promise<StepListener> {
  const l = new StepListener(o);
  await l.listen();
  listeners.push(l);
  return l;
}

/** Connects, writes the token line and a frame, and resolves with what the socket saw. */
function present(port: number, token: string): Promise<{ closedByServer: boolean; socket: Socket }> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => s.write(`${token}\n{"t":"heartbeat"}\n`));
    s.on('error', () => {});
    s.once('close', () => resolve({ closedByServer: true, socket: s }));
    setTimeout(() => resolve({ closedByServer: false, socket: s }), 1_000);
  });
}

describe('step listener tokens', () => {
  it('a forged token is refused before any frame', async () => {
    const l = await listener();
    const claimed: Socket[] = [];
    l.issue((s) => claimed.push(s));
    const r = await present(l.port, randomBytes(32).toString('hex'));
    expect(r.closedByServer).toBe(true);
    expect(claimed).toHaveLength(0);
    expect(l.refused).toBe(1);
  });

  it('the right token is claimed once; presenting it again is refused', async () => {
    const l = await listener();
    const claimed: Socket[] = [];
    const token = l.issue((s) => claimed.push(s));
    const first = await present(l.port, token);
    expect(first.closedByServer).toBe(false);
    expect(claimed).toHaveLength(1);
    // The bytes after the token line are left for the frame reader, unread.
    claimed[0]!.resume();
    const again = await present(l.port, token);
    expect(again.closedByServer).toBe(true);
    expect(claimed).toHaveLength(1);
    expect(l.refused).toBe(1);
    first.socket.destroy();
    claimed[0]!.destroy();
  });

  it('an unclaimed token expires', async () => {
    const l = await listener({ tokenTtlMs: 50 });
    const claimed: Socket[] = [];
    let expired = false;
    const token = l.issue((s) => claimed.push(s), () => (expired = true));
    await new Promise((r) => setTimeout(r, 150));
    expect(expired).toBe(true);
    const r = await present(l.port, token);
    expect(r.closedByServer).toBe(true);
    expect(claimed).toHaveLength(0);
  });

  it('garbage instead of a token line is refused', async () => {
    const l = await listener();
    l.issue(() => {});
    const r = await present(l.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'.padEnd(64, 'x'));
    expect(r.closedByServer).toBe(true);
    expect(l.refused).toBe(1);
  });
});

describe('step log server frames', () => {
  it('a malformed or oversized frame ends the attempt with a clear error; nothing is recorded', async () => {
    const { serveStepLog } = await import('../../src/adapters/deno/step-log-server.ts');
    for (const [bad, expected] of [['not json', /malformed frame from the child: not JSON/], ['{"t":"record","id":1,"entry":{}}', /malformed frame 'record' from the child: entry\.seq/], ['x'.repeat(2 * 1024 * 1024 + 10), /oversized frame from the child/]] as const) {
      const l = await listener();
      const recorded: unknown[] = [];
      const log = {
        runId: 'r1', workflow: 'w', input: null, entries: [], now: () => 1, random: () => 0.5,
        attempt: async () => ({ ok: true as const }), record: async (e: unknown) => void recorded.push(e),
        takeSignal: async () => undefined, emit: async () => undefined, cancelRequested: () => false,
      };
      let done!: (v: unknown) => void;
      const served = new Promise<unknown>((r) => (done = r));
      const token = l.issue((s) => void serveStepLog(s, log, { maxPayloadBytes: 1024 * 1024 }).then(done, done));
      const s = connect({ host: '127.0.0.1', port: l.port }, () => s.write(`${token}\n${bad}\n`));
      s.on('error', () => {});
      const err = await served;
      expect(String(err)).toMatch(expected);
      expect(recorded).toEqual([]);
      s.destroy();
    }
  });
});
