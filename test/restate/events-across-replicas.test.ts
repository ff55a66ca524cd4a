// Step events across Restate replicas (docs/live-output.md, "Where they are seen"): two
// engines share one restate-server, and the one registered last (B) is the deployment
// Restate invokes, so B executes every run. A subscriber on A, whose process executes
// nothing, must still get the run's step events in order, live and from offset 0 of the
// run's event log, as B's own subscriber gets them.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type StepEvent } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { removeDataDir } from './data-dir.ts';

const talk = workflow('talk', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.do('say', () => 'hi');
    const out = ctx.stream('out');
    await out.write('c0');
    await ctx.publish('phase', 'waiting');
    await step.waitForEvent('go', { timeout: '120s' });
    await out.write(new Map([['n', 1]]));
    await out.close();
    return 'ok';
  });
});

let gate: Promise<void> = Promise.resolve();
const body = workflow('body', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.do('gen', async ({ stream }) => {
      const out = stream('tokens');
      await gate;
      out.write('t1');
      out.write('t2');
      return 2;
    });
    await ctx.stream('tokens').close();
    return 'ok';
  });
});

/** What says an event apart (its clock `at` aside). */
const shape = (e: StepEvent) => [e.type, e.step, e.attempt ?? null, e.key ?? null, e.offset ?? null, e.chunk ?? null];
const until = async (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('step events across Restate replicas', () => {
  const dirA = mkdtempSync(join(tmpdir(), 'tranquil-rs-evA-'));
  const dirB = mkdtempSync(join(tmpdir(), 'tranquil-rs-evB-'));
  let a: Engine;
  let b: Engine;
  let adminUrl: string;
  beforeAll(async () => {
    a = await createEngine({ backend: 'restate', dataDir: dirA, workflows: [talk, body], log: { level: 'error' } });
    await a.start();
    const ports = JSON.parse(readFileSync(join(dirA, 'restate', 'ports.json'), 'utf8')) as { ingress: number; admin: number };
    adminUrl = `http://127.0.0.1:${ports.admin}`;
    b = await createEngine({ backend: 'restate', dataDir: dirB, workflows: [talk, body], log: { level: 'error' }, restate: { ingressUrl: `http://127.0.0.1:${ports.ingress}`, adminUrl } });
    await b.start();
  }, 120_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    removeDataDir(dirB);
    removeDataDir(dirA);
  });

  it("a subscriber on replica A gets, in order, the step events of a run replica B executes, live and from offset 0", async () => {
    const onA: StepEvent[] = [];
    const onB: StepEvent[] = [];
    const offA = a.runs.subscribe((e) => void onA.push(e), { runId: 'ev1' });
    const offB = b.runs.subscribe((e) => void onB.push(e), { runId: 'ev1' });
    await a.trigger('talk', null, { runId: 'ev1' });
    await until('ev1 waiting', async () => (await a.runs.get('ev1')).status === 'waiting');
    // Live: A has what B emitted so far, while the run waits.
    await until('A heard the wait', () => onA.some((e) => e.type === 'step.waiting'));
    expect(onA.map(shape)).toEqual(onB.map(shape));
    await a.signal('ev1', 'go', null);
    expect((await a.result('ev1', { timeout: '60s' })).status).toBe('succeeded');
    await until('A heard the close', () => onA.some((e) => e.type === 'stream.closed'));
    await until('B heard the close', () => onB.some((e) => e.type === 'stream.closed'));
    offA();
    offB();
    // B executed the run: the invocation is pinned to B's deployment, not A's.
    const pinned = (await (await fetch(`${adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: "SELECT pinned_deployment_id AS d FROM sys_invocation WHERE target_service_key = 'ev1' AND target_handler_name = 'run'" }) })).json()) as { rows: { d: string }[] };
    const deployments = (await (await fetch(`${adminUrl}/deployments`)).json()) as { deployments: { id: string; uri?: string }[] };
    const uri = deployments.deployments.find((d) => d.id === pinned.rows[0]?.d)?.uri ?? '';
    expect(uri).toContain(`:${readFileSync(join(dirB, 'endpoint-port'), 'utf8').trim()}/`);
    const types = onB.map((e) => e.type);
    expect(types).toEqual(['step.started', 'step.succeeded', 'stream.chunk', 'state.published', 'step.waiting', 'step.signaled', 'stream.chunk', 'stream.closed']);
    expect(onA.map(shape)).toEqual(onB.map(shape));
    // From offset 0 of the run's log, on A after the end: the same events, in the same order.
    const replay: StepEvent[] = [];
    const offReplay = a.runs.subscribe((e) => void replay.push(e), { runId: 'ev1', from: 0 });
    await until('the replay', () => replay.length >= onB.length);
    await new Promise((r) => setTimeout(r, 200));
    offReplay();
    expect(replay.map(shape)).toEqual(onB.map(shape));
    // From an offset: the rest.
    const rest: StepEvent[] = [];
    const offRest = a.runs.subscribe((e) => void rest.push(e), { runId: 'ev1', from: 5 });
    await until('the rest', () => rest.length >= onB.length - 5);
    offRest();
    expect(rest.map(shape)).toEqual(onB.slice(5).map(shape));
    // The chunk as stored: the Map in its stored form, decoded the same on either side.
    expect(onA.find((e) => e.type === 'stream.chunk' && e.offset === 1)?.chunk).toEqual(onB.find((e) => e.type === 'stream.chunk' && e.offset === 1)?.chunk);
  }, 120_000);

  it('a reader on A follows the stream of a run on B without polling the run, and from offset 0 a subscriber on A needs runId', async () => {
    expect(() => a.runs.subscribe(() => {}, { from: 0 })).toThrow(/options.from: reads one run's event log: give options.runId too/);
    await a.trigger('talk', null, { runId: 'ev2' });
    await until('ev2 waiting', async () => (await a.runs.get('ev2')).status === 'waiting');
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const c of a.runs.stream('ev2', 'out')) got.push(c);
    })();
    await until('the first chunk', () => got.length === 1);
    await b.signal('ev2', 'go', null);
    await reading;
    expect(got).toEqual(['c0', new Map([['n', 1]])]);
  }, 60_000);

  it("a provisional reader on A gets a body's chunks as B's body writes them, before its step commits", async () => {
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    await a.trigger('body', null, { runId: 'ev3' });
    await until('ev3 running', async () => (await a.runs.get('ev3')).status === 'running');
    const items: unknown[] = [];
    const reading = (async () => {
      for await (const it of a.runs.stream('ev3', 'tokens', { provisional: true })) items.push(it);
    })();
    // The reader's subscription starts (an ingress round trip), then the body writes.
    await new Promise((r) => setTimeout(r, 1000));
    open();
    await reading;
    expect(items).toEqual([{ offset: 0, chunk: 't1', provisional: { step: 'gen', attempt: 1 } }, { offset: 1, chunk: 't2', provisional: { step: 'gen', attempt: 1 } }]);
  }, 60_000);
});
