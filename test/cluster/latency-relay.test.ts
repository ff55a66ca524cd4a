// The cluster test's latency relay (latency-relay.ts) on loopback, no root needed: bytes come
// through in order whatever the jitter, a round trip takes at least twice the smallest
// one-way delay, an end is passed on after the bytes before it, and a delay of 0 adds none.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { relayConnection, releaseAt, type Delay } from './latency-relay.ts';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(onConn: (s: Socket) => void): Promise<number> {
  const s = createServer({ allowHalfOpen: true }, onConn);
  servers.push(s);
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return (s.address() as AddressInfo).port;
}

/** An echo server behind a relay; returns the relay's port. */
async function echoBehindRelay(delay: Delay): Promise<number> {
  const echo = await listen((s) => s.pipe(s));
  return listen((c) => relayConnection(c, { host: '127.0.0.1', port: echo }, () => delay));
}

describe('latency relay', () => {
  it('releases a chunk no earlier than the one before it, however the jitter falls', () => {
    const d = { delayMs: 100, jitterMs: 20 };
    const first = releaseAt(0, 1000, d, () => 1); // +20
    expect(first).toBe(1120);
    expect(releaseAt(first, 1001, d, () => 0)).toBe(1120); // would be 1081: held behind the first
    expect(releaseAt(first, 1050, d, () => 0.5)).toBe(1150);
  });

  it('echoes 200 chunks in order through 30 ms ± 20 ms each way; each round trip is at least 2 × 10 ms; the end comes after the bytes', async () => {
    const port = await echoBehindRelay({ delayMs: 30, jitterMs: 20 });
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    await once(s, 'connect');
    s.setNoDelay(true);
    let got = '';
    s.on('data', (b: Buffer) => (got += b.toString()));
    const t0 = performance.now();
    s.write('ping;');
    while (!got.includes('ping;')) await new Promise((r) => setTimeout(r, 1));
    const rtt = performance.now() - t0;
    expect(rtt).toBeGreaterThanOrEqual(20);
    const sent = Array.from({ length: 200 }, (_, i) => `${i};`);
    for (const x of sent) {
      s.write(x);
      await new Promise((r) => setImmediate(r));
    }
    s.end();
    await once(s, 'end');
    expect(got).toBe(`ping;${sent.join('')}`);
    s.destroy();
  });

  it('with no delay set, bytes pass straight through', async () => {
    const port = await echoBehindRelay({ delayMs: 0, jitterMs: 0 });
    const s = connect(port, '127.0.0.1');
    await once(s, 'connect');
    s.write('x');
    const [b] = (await once(s, 'data')) as [Buffer];
    expect(b.toString()).toBe('x');
    s.destroy();
  });
});
