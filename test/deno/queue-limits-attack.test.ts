// Hostile workflow files against a queue the app's code also declares. Real Deno children, SQLite.
// 1. A file declares the queue with a limit of its own (1,000 at once where the app allows 1)
//    to take more of a shared rate-limited resource: that file alone is refused (the engine
//    and the app's workflows start).
// 2. A file asks for slots for steps it never runs, to starve the app's runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';
import { manual, queue, workflow } from '@tranquil/sdk';
import { resolveConfig } from '../../compose/config.ts';
import { readQueueRows } from '../../compose/queue-reader.ts';
import { MAX_UNUSED_GRANTS } from '../../src/adapters/deno/unused-grants.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a workflow file cannot redefine a queue the app declares', () => {
  it('a file declaring the app\'s queue with a larger limit is refused alone, in one line naming the file, the queue and the conflict; the app starts and runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-qattack-'));
    dirs.push(dir);
    const file = join(dir, 'greedy.ts');
    writeFileSync(file, `import { workflow, manual, queue } from '@tranquil/sdk';
const llm = queue('llm', { concurrency: 1000 });
export default workflow('greedy', { queues: [llm] }, (w) => {
  w.trigger(manual());
  w.run(({ step }) => step.do('call', { queue: llm }, () => 'took a slot'));
});\n`);
    const llm = queue('llm', { concurrency: 1 });
    const app = workflow('app', { queues: [llm] }, (w) => {
      w.trigger(manual());
      w.run(({ step }) => step.do('call', { queue: llm }, () => 'ok'));
    });
    const logged: string[] = [];
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflows: [app], workflowFiles: [file], log: { level: 'warn', sink: (_l, m) => void logged.push(m) } });
    const line = `workflow file ${file}: workflow 'greedy' is not registered: it defines queue 'llm' with limits {"concurrency":1000}, but workflow 'app' defines it with {"concurrency":1} (a file shares a queue by declaring the same limits)`;
    try {
      await engine.start();
      expect(logged).toContain(line);
      // The app's workflow starts and runs on its own terms.
      const { runId } = await engine.trigger('app', null);
      expect(await engine.result(runId, { timeout: '30s' })).toMatchObject({ status: 'succeeded', output: 'ok' });
      // The file's workflow is not there to approve or trigger: each says why, in the same line.
      await expect(engine.workflows.approve('greedy')).rejects.toThrow(line);
      await expect(engine.trigger('greedy', null)).rejects.toThrow(line);
      expect((await engine.workflows.list()).map((w) => w.name)).toEqual(['app']);
    } finally {
      await engine.stop().catch(() => {});
    }
  }, 120_000);
});

describe.each(['sqlite'] as const)('a workflow file cannot hoard the slots of a queue it shares with the app (%s)', (backend) => {
  it('slots asked for steps that never run are released after the heartbeat timeout; the app\'s runs get slots and finish; the file is failed in one line; nothing leaks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-qhoard-'));
    dirs.push(dir);
    const llm = queue('llm', { concurrency: 2 });
    let now = 0;
    let most = 0;
    const app = workflow('app', { queues: [llm] }, (w) => {
      w.trigger(manual());
      w.run(({ input, step }) => step.do('call', { queue: llm }, async () => {
        const pair = (input as { pair?: boolean } | null)?.pair === true;
        most = Math.max(most, ++now);
        // A pair: each body waits (up to 20 s) for the other to hold the queue's second slot.
        for (let i = 0; i < 400 && pair && now < 2; i++) await new Promise((r) => setTimeout(r, 50));
        const both = now === 2;
        await new Promise((r) => setTimeout(r, 50));
        now--;
        return pair ? (both ? 'both' : 'alone') : 'ok';
      }));
    });
    const dataDir = join(dir, 'data');
    const engine = await createEngine({
      backend, dataDir, workflows: [app], workflowFiles: [join(import.meta.dirname, 'fixtures', 'slot-hoarder.ts')], log: { level: 'silent' },
      deno: { heartbeatInterval: 200, heartbeatTimeout: 1_500 },
    });
    await engine.start();
    try {
      await engine.workflows.approve('hoarder');
      const { runId: hoard } = await engine.trigger('hoarder', null);
      // The file holds both slots and has its other 48 asks in line before the app asks.
      for (let i = 0; i < 600 && (await engine.runs.get(hoard)).queued === undefined; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await engine.runs.get(hoard)).queued).toMatchObject({ queue: 'llm', limit: 2 });
      const config = resolveConfig({ backend: 'sqlite', dataDir });
      const rows = async () => (await readQueueRows(config, 'llm'))?.[0];
      if (backend === 'sqlite') {
        for (let i = 0; i < 300 && (await rows())?.waiting !== 48; i++) await new Promise((r) => setTimeout(r, 50));
        expect(await rows()).toMatchObject({ running: 2, waiting: 48 });
      }
      const runs = await Promise.all([1, 2, 3, 4].map(() => engine.trigger('app', null)));
      for (const { runId } of runs) expect(await engine.result(runId, { timeout: '60s' })).toMatchObject({ status: 'succeeded', output: 'ok' });
      expect(most).toBeLessThanOrEqual(2);
      const failed = await engine.result(hoard, { timeout: '30s' });
      expect(failed.status).toBe('failed');
      expect(failed.error?.message).toMatch(new RegExp(`^workflow file .*slot-hoarder\\.ts: ${MAX_UNUSED_GRANTS} of its slot grants went unused \\(no step attempt began within 1500ms of the grant; last step 's\\d+' of queue 'llm' in run ${hoard}\\): a file holding queue slots it does not use gets no more slots until the engine restarts$`));
      // Its next run is refused at its first ask.
      const again = await engine.trigger('hoarder', null);
      expect((await engine.result(again.runId, { timeout: '30s' })).error?.message).toMatch(/gets no more slots until the engine restarts$/);
      // Nothing leaked: both slots are free at once for the app, and nothing is left in line.
      const pair = await Promise.all([1, 2].map(() => engine.trigger('app', { pair: true })));
      for (const { runId } of pair) expect(await engine.result(runId, { timeout: '60s' })).toMatchObject({ status: 'succeeded', output: 'both' });
      expect(await engine.runs.list({ queue: 'llm' })).toEqual([]);
      if (backend === 'sqlite') expect(await rows()).toMatchObject({ running: 0, waiting: 0 });
    } finally {
      await engine.stop();
    }
  }, 180_000);
});
