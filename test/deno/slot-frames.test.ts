// The engine side of flow control for workflow files (docs/runner.md, The step protocol): a
// child's `slot` frame is served only for a queue its version declares, for its own run; the
// engine holds the slot and releases it when the step's attempt ends; a `release` names only
// this child's own asks; a child that dies leaves its slots released (SQLite) or with the run
// (a log whose slots outlive the session: Restate).
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StepListener } from '../../src/adapters/deno/step-listener.ts';
import { MAX_OPEN_SLOTS, serveStepLog, type ServeOptions } from '../../src/adapters/deno/step-log-server.ts';
import { MAX_UNUSED_GRANTS, UnusedGrants } from '../../src/adapters/deno/unused-grants.ts';
import type { SlotHold, SlotRequest, StepLog } from '../../src/ports/step-log.ts';
import { queue } from '@tranquil/sdk';

const listeners: StepListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close();
});

const busy = queue('busy', { concurrency: 1 });

interface Rig {
  asks: SlotRequest[];
  released: string[];
  served: Promise<unknown>;
  send(frame: object): void;
  /** The next engine frame of type `t`. */
  next(t: string): Promise<Record<string, unknown>>;
  socket: Socket;
}

async function rig(extra: Partial<StepLog> = {}, serveExtra: Partial<ServeOptions> = {}): Promise<Rig> {
  const l = new StepListener();
  await l.listen();
  listeners.push(l);
  const asks: SlotRequest[] = [];
  const released: string[] = [];
  const log: StepLog = {
    runId: 'r1', workflow: 'w', input: null, entries: [], now: () => 1, random: () => 0.5,
    attempt: async (_call, _attempt, run) => run(), record: async () => {},
    takeSignal: async () => undefined, emit: async () => undefined, cancelRequested: () => false,
    slot: async (req: SlotRequest): Promise<SlotHold> => {
      asks.push(req);
      return { grantedAt: 7, release: () => void released.push(req.step) };
    },
    ...extra,
  };
  let done!: (v: unknown) => void;
  const served = new Promise<unknown>((r) => (done = r));
  const token = l.issue((s) => void serveStepLog(s, log, { maxPayloadBytes: 1024 * 1024, queues: new Map([['busy', busy]]), ...serveExtra }).then(done, done));
  const socket = connect({ host: '127.0.0.1', port: l.port }, () => socket.write(`${token}\n`));
  socket.on('error', () => {});
  const frames: Record<string, unknown>[] = [];
  const waiting: (() => void)[] = [];
  let buf = '';
  socket.on('data', (c: Buffer) => {
    buf += c.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      frames.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
      buf = buf.slice(i + 1);
      for (const w of waiting.splice(0)) w();
    }
  });
  const next = async (t: string) => {
    for (;;) {
      const at = frames.findIndex((f) => f.t === t);
      if (at >= 0) return frames.splice(at, 1)[0]!;
      await new Promise<void>((r) => waiting.push(r));
    }
  };
  await next('hello');
  return { asks, released, served, send: (f) => socket.write(`${JSON.stringify(f)}\n`), next, socket };
}

const call = { seq: 0, kind: 'do', name: 'call' };

describe('slot frames from a workflow file child', () => {
  it('a declared queue: the slot is asked for this run, held through the attempt, released as it ends', async () => {
    const r = await rig();
    r.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: 'u7' });
    expect(await r.next('reply')).toMatchObject({ id: 1, ok: true, value: { grantedAt: 7 } });
    expect(r.asks).toEqual([{ queue: busy, key: 'u7', runId: 'r1', step: 'call' }]);
    r.send({ t: 'attempt', id: 2, call, attempt: 1 });
    await r.next('run');
    expect(r.released).toEqual([]);
    r.send({ t: 'attemptResult', id: 2, result: { ok: true, value: 1 } });
    expect(await r.next('reply')).toMatchObject({ id: 2, ok: true });
    expect(r.released).toEqual(['call']);
    // The child's own release after that changes nothing (idempotent).
    r.send({ t: 'release', slot: 1 });
    r.send({ t: 'outcome', outcome: { type: 'succeeded', output: null }, cancelDelivered: false });
    await r.served;
    expect(r.released).toEqual(['call']);
    r.socket.destroy();
  });

  it('a queue the version does not declare is refused in one line; no slot is asked', async () => {
    const r = await rig();
    r.send({ t: 'slot', id: 1, step: 'call', queue: 'other', key: '' });
    const reply = await r.next('reply');
    expect(reply).toMatchObject({ id: 1, ok: false, error: { name: 'ValidationError' } });
    expect((reply.error as { message: string }).message).toBe("step 'call': unknown queue 'other': a workflow file may name only the queues it declares (workflow(name, { queues: [queue('other', {...})] }, ...))");
    r.send({ t: 'slot', id: 2, step: 'x', queue: '~singleton.w', key: '' });
    expect(await r.next('reply')).toMatchObject({ id: 2, ok: false });
    expect(r.asks).toEqual([]);
    r.socket.destroy();
    await r.served;
  });

  it('a release of a slot this child never asked for, or a second ask for one step, fails the execution', async () => {
    const forged = await rig();
    forged.send({ t: 'release', slot: 99 });
    expect(String(await forged.served)).toMatch(/release of slot 99: this child asked for no such slot/);
    forged.socket.destroy();
    const twice = await rig();
    twice.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: '' });
    await twice.next('reply');
    twice.send({ t: 'slot', id: 2, step: 'call', queue: 'busy', key: '' });
    expect(String(await twice.served)).toMatch(/slot frame 2 for step 'call': that step already asks for or holds a slot/);
    // The execution ended: the slot it held is released.
    expect(twice.released).toEqual(['call']);
    twice.socket.destroy();
  });

  it('more open asks than MAX_OPEN_SLOTS fail the execution', async () => {
    const r = await rig();
    for (let i = 1; i <= MAX_OPEN_SLOTS + 1; i++) r.send({ t: 'slot', id: i, step: `s${i}`, queue: 'busy', key: '' });
    expect(String(await r.served)).toMatch(new RegExp(`slot frame ${MAX_OPEN_SLOTS + 1} for step 's${MAX_OPEN_SLOTS + 1}': ${MAX_OPEN_SLOTS} slot asks already open`));
    expect(r.asks).toHaveLength(MAX_OPEN_SLOTS);
    r.socket.destroy();
  });

  it('a child that dies holding a slot: released, unless the log keeps slots with the run (Restate)', async () => {
    for (const [outlive, expected] of [[false, ['call']], [true, []]] as const) {
      const r = await rig(outlive ? { slotsOutliveSession: true } : {});
      r.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: '' });
      await r.next('reply');
      r.socket.destroy();
      expect(String(await r.served)).toMatch(/closed the step connection/);
      expect(r.released).toEqual(expected);
    }
  });

  it('a frame with a bad slot field is refused by the protocol schema', async () => {
    const r = await rig();
    r.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: 7 });
    expect(String(await r.served)).toMatch(/malformed frame 'slot' from the child: key/);
    expect(r.asks).toEqual([]);
    r.socket.destroy();
  });
});

describe('a slot grant whose step attempt does not begin promptly', () => {
  const grants = (unused: UnusedGrants, lines: string[] = []) => ({ grants: { deadlineMs: 150, unused, file: '/srv/hoard.ts', onUnused: (l: string) => void lines.push(l) } });

  it('is released and counted; the late attempt fails (retried by its policy) and runs no body', async () => {
    const lines: string[] = [];
    const unused = new UnusedGrants();
    const r = await rig({}, grants(unused, lines));
    r.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: '' });
    await r.next('reply');
    await new Promise((res) => setTimeout(res, 400));
    expect(r.released).toEqual(['call']);
    expect(lines).toEqual(["step 'call': its slot of queue 'busy' was released: no attempt of the step began within 150ms of the grant"]);
    r.send({ t: 'attempt', id: 2, call, attempt: 1 });
    expect(await r.next('reply')).toMatchObject({ id: 2, ok: true, value: { ok: false, terminal: false, error: { name: 'SlotLapsedError', message: lines[0] } } });
    // Asked again and used at once: held through an attempt longer than the deadline.
    r.send({ t: 'slot', id: 3, step: 'call', queue: 'busy', key: '' });
    await r.next('reply');
    r.send({ t: 'attempt', id: 4, call, attempt: 2 });
    await r.next('run');
    await new Promise((res) => setTimeout(res, 400));
    expect(r.released).toEqual(['call']);
    r.send({ t: 'attemptResult', id: 4, result: { ok: true, value: 1 } });
    await r.next('reply');
    expect(r.released).toEqual(['call', 'call']);
    r.socket.destroy();
    await r.served;
  });

  it('a release of a grant already released as unused frees nothing twice (the queue would run one body more)', async () => {
    // A hostile child lets its grant lapse, then releases it, hoping the engine's release of a
    // slot it no longer holds frees one that another body holds.
    const unused = new UnusedGrants();
    const r = await rig({}, grants(unused));
    r.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: '' });
    await r.next('reply');
    await new Promise((res) => setTimeout(res, 400));
    expect(r.released).toEqual(['call']);
    r.send({ t: 'release', slot: 1 });
    r.send({ t: 'release', slot: 1 });
    // The session goes on (a frame after them is answered) and nothing more was released.
    r.send({ t: 'attempt', id: 2, call, attempt: 1 });
    expect(await r.next('reply')).toMatchObject({ id: 2, ok: true, value: { ok: false, error: { name: 'SlotLapsedError' } } });
    expect(r.released).toEqual(['call']);
    r.socket.destroy();
    await r.served;
  });

  it(`${MAX_UNUSED_GRANTS} unused grants of one version fail its execution in one line; its later runs get no slot`, async () => {
    const unused = new UnusedGrants();
    const r = await rig({}, grants(unused));
    for (let i = 1; i <= MAX_UNUSED_GRANTS; i++) r.send({ t: 'slot', id: i, step: `s${i}`, queue: 'busy', key: '' });
    const reason = String(await r.served);
    expect(reason).toMatch(new RegExp(`workflow file /srv/hoard.ts: ${MAX_UNUSED_GRANTS} of its slot grants went unused \\(no step attempt began within 150ms of the grant; last step 's${MAX_UNUSED_GRANTS}' of queue 'busy' in run r1\\): a file holding queue slots it does not use gets no more slots until the engine restarts`));
    expect(r.released.sort()).toEqual(['s1', 's2', 's3']);
    r.socket.destroy();
    const later = await rig({}, grants(unused));
    later.send({ t: 'slot', id: 1, step: 'call', queue: 'busy', key: '' });
    expect(String(await later.served)).toMatch(/gets no more slots until the engine restarts/);
    expect(later.asks).toEqual([]);
    later.socket.destroy();
  });
});
