// Capability steps from a workflow file (issue 16): the run executes in a real Deno child
// with no permission at all; its step.use reaches the host's provider only through the
// engine (a `capability` frame of the step protocol), parks when none matches, and resumes
// in a new child once a matching provider is registered. The provider runs in this process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const file = `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-uses-host', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const page = await step.use('browser.scrape', { url: input.url }, { affinity: { partition: 'work' }, retries: { limit: 2, delay: 10 } });
    return { page, child: typeof Deno === 'object' };
  });
});
`;

describe('capability steps from a Deno run child (SQLite, real Deno child)', () => {
  it('the child parks with no provider, then reaches the matching provider only through the engine', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-cap-deno-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'uses-host.ts'), file);
    const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [join(dir, 'uses-host.ts')], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('file-uses-host');
      const wrong: unknown[] = [];
      engine.capabilities.provide('browser.scrape', { partition: 'home' }, (input) => (wrong.push(input), 'wrong'));
      // Its step events, made by the host (docs/live-output.md): as in-process, the parked
      // attempt is reported started then parked, and runs again as attempt 1 once provided.
      const events: unknown[][] = [];
      engine.runs.subscribe((e) => void events.push([e.type, e.step, e.kind, e.attempt ?? null]));
      const { runId } = await engine.trigger('file-uses-host', { url: 'https://example.test/x' });
      for (let i = 0; (await engine.runs.get(runId)).status !== 'parked'; i++) {
        if (i > 1500) throw new Error(`run never parked: ${JSON.stringify(await engine.runs.get(runId))}`);
        await sleep(20);
      }
      const why = await engine.runs.explain(runId);
      expect(why.summary).toContain("capability 'browser.scrape' matching partition=work");
      const seen: { pid: number; key: string }[] = [];
      engine.capabilities.provide('browser.scrape', { partition: 'work' }, (input, info) => {
        seen.push({ pid: process.pid, key: info.idempotencyKey });
        return { title: `title of ${(input as { url: string }).url}` };
      });
      const done = await engine.result(runId, { timeout: '60s' });
      expect(done.status).toBe('succeeded');
      expect(done.output).toEqual({ page: { title: 'title of https://example.test/x' }, child: true });
      // Called once, in this (the engine's) process, with the step's key; never the other partition.
      expect(seen).toEqual([{ pid: process.pid, key: `${runId}/browser.scrape` }]);
      expect(wrong).toEqual([]);
      expect(done.steps[0]).toMatchObject({ kind: 'use', status: 'succeeded', attempts: 1 });
      for (let i = 0; events.length < 4 && i < 100; i++) await sleep(20);
      expect(events).toEqual([
        ['step.started', 'browser.scrape', 'use', 1],
        ['step.parked', 'browser.scrape', 'use', 1],
        ['step.started', 'browser.scrape', 'use', 1],
        ['step.succeeded', 'browser.scrape', 'use', 1],
      ]);
    } finally {
      await engine.stop();
    }
  }, 120_000);
});
