// A queue slot taken on the fast path (src/runtime/queues.ts, tryAcquire: a free slot and
// nobody waiting) is held in memory; its row reaches the file with the next group commit while
// the body still runs (so `tranquil queues` sees it, and a restart puts that body first in
// line), and leaves it once the body ends. A synchronous body writes no row at all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { manual, queue, workflow } from '@tranquil/sdk';
import { createEngine } from '@tranquil/engine';
import { DB_FILE } from '../../src/adapters/sqlite/store.ts';
import { readQueues } from '../../src/adapters/sqlite/queue-store.ts';
import { resolveConfig } from '../../compose/config.ts';
import { readQueueRows } from '../../compose/queue-reader.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fast-path queue slots in the SQLite file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('an async body\'s slot row is written while it runs and dropped when it ends; a sync body leaves none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-qrows-'));
    dirs.push(dir);
    const q = queue('rows', { concurrency: 5 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let bodyStarted = false;
    const slow = workflow('q-slow', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.do('call', { queue: q }, async () => {
        bodyStarted = true;
        await gate;
        return 1;
      }));
    });
    const fast = workflow('q-fast', { queues: [q] }, (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        for (let i = 0; i < 20; i++) await step.do(`s${i}`, { queue: q }, () => i);
      });
    });
    const engine = await createEngine({ backend: 'sqlite', dataDir: dir, workflows: [slow, fast] });
    await engine.start();
    const reader = new Database(join(dir, DB_FILE), { readonly: true });
    try {
      const rowCount = () => (reader.prepare(`SELECT count(*) AS n FROM queue_slots`).get() as { n: number }).n;
      const { runId: f } = await engine.trigger('q-fast', null);
      expect((await engine.result(f, { timeout: '10s' })).status).toBe('succeeded');
      await pause(50);
      expect(rowCount()).toBe(0);
      expect(readQueues(reader)).toEqual([{ name: 'rows', limits: { concurrency: 5 }, running: 0, waiting: 0 }]);
      const { runId: s } = await engine.trigger('q-slow', null);
      for (let i = 0; i < 100 && (!bodyStarted || rowCount() === 0); i++) await pause(10);
      expect(readQueues(reader)[0]).toMatchObject({ name: 'rows', running: 1, waiting: 0 });
      // What `tranquil queues list|describe` reads (compose/queue-reader.ts, either backend).
      const config = resolveConfig({ backend: 'sqlite', dataDir: dir });
      expect(await readQueueRows(config)).toEqual([{ name: 'rows', limits: { concurrency: 5 }, running: 1, waiting: 0 }]);
      expect(await readQueueRows(config, 'rows')).toEqual([{ name: 'rows', limits: { concurrency: 5 }, running: 1, waiting: 0, keys: [{ key: '', running: 1, waiting: 0 }] }]);
      expect(await readQueueRows(config, 'nope')).toEqual([]);
      release();
      expect((await engine.result(s, { timeout: '10s' })).status).toBe('succeeded');
      await pause(50);
      expect(rowCount()).toBe(0);
    } finally {
      reader.close();
      await engine.stop();
    }
  });
});
