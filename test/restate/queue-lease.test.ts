// A slot on Restate belongs to the run's durable invocation (queue-slot.ts): a replica that
// dies leaves it to the invocation's next attempt, which releases it. The one way a holder
// never releases is an invocation ended from outside, with no handler code run (an operator's
// `kill`): the queue object's audit (queue-object.ts, every AUDIT_MS while asks are in it)
// drops asks whose run Restate reports ended. Here the audit is called at once through the
// ingress, as its delayed send would.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import { createEngine } from '@tranquil/engine';
import { readAdminFile } from '../../src/adapters/restate/server-process.ts';
import { removeDataDir } from './data-dir.ts';
import { resolveConfig } from '../../compose/config.ts';
import { readQueueRows } from '../../compose/queue-reader.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-rs-qlease-'));
afterAll(() => removeDataDir(dir));

const until = async (what: string, cond: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

async function adminQuery<T>(sql: string): Promise<T[]> {
  const r = await fetch(`${readAdminFile(dir)!.adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) });
  return ((await r.json()) as { rows: T[] }).rows;
}

it('a slot held by a run killed from outside is freed by the queue object\'s audit; never before the run ended', async () => {
  const ran: string[] = [];
  let release!: () => void;
  const forever = new Promise<void>((r) => (release = r));
  const q = queue('lease', { concurrency: 1 });
  const wf = workflow('q-lease', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => step.do('call', { queue: q }, async () => {
      ran.push(input.who);
      if (input.who === 'holder') await forever;
    }));
  });
  const engine = await createEngine({ backend: 'restate', dataDir: dir, workflows: [wf] });
  await engine.start();
  try {
    const { runId: holder } = await engine.trigger('q-lease', { who: 'holder' });
    await until('the holder to run', () => ran.length === 1);
    const { runId: next } = await engine.trigger('q-lease', { who: 'next' });
    await until('the next to queue', async () => (await engine.runs.get(next)).queued !== undefined);
    const ingress = `http://127.0.0.1:${(JSON.parse(readFileSync(join(dir, 'restate', 'ports.json'), 'utf8')) as { ingress: number }).ingress}`;
    const audit = async () => expect((await fetch(`${ingress}/tqqueue/lease/audit/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'null' })).ok).toBe(true);
    // What `tranquil queues list|describe` reads on Restate: the queue object's state.
    const config = resolveConfig({ backend: 'restate', dataDir: dir });
    expect(await readQueueRows(config)).toEqual([{ name: 'lease', limits: { concurrency: 1 }, running: 1, waiting: 1 }]);
    expect(await readQueueRows(config, 'lease')).toEqual([{ name: 'lease', limits: { concurrency: 1 }, running: 1, waiting: 1, keys: [{ key: '', running: 1, waiting: 1 }] }]);
    // The holder lives: an audit keeps its slot.
    await audit();
    await new Promise((r) => setTimeout(r, 1000));
    expect((await engine.runs.get(next)).queued).toMatchObject({ queue: 'lease', running: 1, ahead: 0 });
    const [inv] = await adminQuery<{ id: string }>(`SELECT id FROM sys_invocation WHERE target_handler_name = 'run' AND target_service_key = '${holder}'`);
    expect((await fetch(`${readAdminFile(dir)!.adminUrl}/invocations/${inv!.id}/kill`, { method: 'PATCH' })).status).toBeLessThan(300);
    await until('the holder\'s invocation to end', async () => (await adminQuery<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = '${inv!.id}'`))[0]?.status === 'completed');
    await audit();
    expect((await engine.result(next, { timeout: '20s' })).status).toBe('succeeded');
    expect(ran).toEqual(['holder', 'next']);
    // Nothing held or waiting any more: the object keeps no state, the queue is not listed.
    await until('the queue to empty', async () => (await readQueueRows(config))!.length === 0);
  } finally {
    release();
    await engine.stop();
  }
}, 120_000);
