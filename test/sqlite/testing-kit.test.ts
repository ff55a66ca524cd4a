// Long durations under the testing kit's manual clock (SQLite only: Restate cannot fake time).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manual, TimeoutError, workflow } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';

const open: TestEngine[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close().catch(() => {});
});
async function kit(opts: Parameters<typeof createTestEngine>[0]) {
  const t = await createTestEngine(opts);
  open.push(t);
  return t;
}

const nudge = (sent: string[]) =>
  workflow('activation-nudge', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step, ctx }) => {
      await step.sleep('pause', '48h');
      const user = await step.do('fetch', () => ({ id: input.userId, activated: false }));
      await step.do('nudge', ({ idempotencyKey }) => sent.push(idempotencyKey));
      return { nudged: true, at: ctx.now(), user };
    });
  });

describe('testing kit (manual clock)', () => {
  it('a 48h sleep completes in test time, waking exactly at its due time', async () => {
    const sent: string[] = [];
    const t = await kit({ workflows: [nudge(sent)], startAt: '2026-03-28T08:00:00Z' });
    const { runId } = await t.engine.trigger('activation-nudge', { userId: 'u1' });
    await t.idle();
    const sleeping = await t.engine.runs.get(runId);
    expect(sleeping.status).toBe('sleeping');
    expect(sleeping.wakeAt).toBe('2026-03-30T08:00:00.000Z');
    await t.advance('47h59m');
    expect((await t.engine.runs.get(runId)).status).toBe('sleeping');
    expect(sent).toEqual([]);
    await t.advance('1m');
    const done = await t.engine.runs.get(runId);
    expect(done.status).toBe('succeeded');
    expect(done.output).toMatchObject({ nudged: true, at: Date.parse('2026-03-30T08:00:00Z') });
    expect(sent).toEqual([`${runId}/nudge`]);
  });

  it('exponential backoff: retrying status, nextRetryAt, delay * 2^(attempt-1) capped by maxDelay', async () => {
    const at: number[] = [];
    let t!: TestEngine;
    const wf = workflow('backoff', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('call', { retries: { limit: 5, backoff: 'exponential', delay: '30s', maxDelay: '90s', jitter: false } }, () => {
          at.push(t.now());
          throw new Error('503');
        });
      });
    });
    t = await kit({ workflows: [wf] });
    const start = t.now();
    const { runId } = await t.engine.trigger('backoff', null);
    await t.idle();
    const retrying = await t.engine.runs.get(runId);
    expect(retrying.status).toBe('retrying');
    expect(retrying.steps[0]).toMatchObject({ name: 'call', status: 'retrying', attempts: 1, nextRetryAt: new Date(start + 30_000).toISOString() });
    expect((await t.engine.runs.explain(runId)).summary).toMatch(/retrying step 'call': attempt 2 of 5 at .*; last error \(attempt 1\): Error: 503\.$/);
    await t.advance('1h');
    expect(at.map((x) => (x - start) / 1000)).toEqual([0, 30, 90, 180, 270]);
    expect((await t.engine.runs.get(runId)).status).toBe('failed');
  });

  it('jitter comes from the injected random source', async () => {
    const at: number[] = [];
    let t!: TestEngine;
    const wf = workflow('jittery', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('call', { retries: { limit: 2, backoff: 'constant', delay: '10s', jitter: true } }, () => {
          at.push(t.now());
          throw new Error('x');
        });
      });
    });
    t = await kit({ workflows: [wf], random: () => 0 });
    await t.engine.trigger('jittery', null);
    await t.advance('1m');
    expect(at[1]! - at[0]!).toBe(5_000);
  });

  it('a 7-day waitForEvent times out after exactly 7 days; a signal before then resumes at once', async () => {
    const wf = workflow('reply', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          return await step.waitForEvent('reply', { timeout: '7d' });
        } catch (err) {
          return err instanceof TimeoutError ? 'no reply' : 'other';
        }
      });
    });
    const t = await kit({ workflows: [wf] });
    const quiet = (await t.engine.trigger('reply', null)).runId;
    const answered = (await t.engine.trigger('reply', null)).runId;
    await t.idle();
    await t.advance('3d');
    await t.engine.signal(answered, 'reply', { text: 'thanks' });
    await t.idle();
    expect((await t.engine.runs.get(answered)).output).toEqual({ text: 'thanks' });
    await t.advance('3d23h59m');
    expect((await t.engine.runs.get(quiet)).status).toBe('waiting');
    await t.advance('1m');
    expect((await t.engine.runs.get(quiet)).output).toBe('no reply');
  });

  it('a waitForEvent without timeout waits indefinitely', async () => {
    const wf = workflow('forever', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('go'));
    });
    const t = await kit({ workflows: [wf] });
    const { runId } = await t.engine.trigger('forever', null);
    await t.advance('3650d');
    const v = await t.engine.runs.get(runId);
    expect(v.status).toBe('waiting');
    expect(v.wakeAt).toBeUndefined();
    expect((await t.engine.runs.explain(runId)).summary).toMatch(/waiting in step 'go' for signal 'go', with no timeout/);
  });

  it('sleep(0), negative durations and sleepUntil in the past are due at once', async () => {
    const wf = workflow('instant', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.sleep('zero', 0);
        await step.sleep('negative', -1000);
        await step.sleepUntil('past', new Date('2000-01-01T00:00:00Z'));
        return 'done';
      });
    });
    const t = await kit({ workflows: [wf] });
    const { runId } = await t.engine.trigger('instant', null);
    await t.idle();
    expect((await t.engine.runs.get(runId)).output).toBe('done');
  });

  it('state survives an engine restart on the same data dir: timers that came due while down fire at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-kit-'));
    try {
      const sent: string[] = [];
      const a = await createTestEngine({ workflows: [nudge(sent)], dataDir, startAt: '2026-03-28T08:00:00Z' });
      const { runId } = await a.engine.trigger('activation-nudge', { userId: 'u1' });
      await a.advance('1h');
      await a.close();
      const b = await createTestEngine({ workflows: [nudge(sent)], dataDir, startAt: '2026-04-02T00:00:00Z' });
      await b.idle();
      expect((await b.engine.runs.get(runId)).status).toBe('succeeded');
      expect(sent).toEqual([`${runId}/nudge`]);
      await b.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('workflow-level step defaults apply unless a step overrides them', async () => {
    let attempts = 0;
    const wf = workflow('defaults', (w) => {
      w.trigger(manual());
      w.defaults({ retries: { limit: 2, delay: '1s', jitter: false } });
      w.run(async ({ step }) => step.do('x', () => {
        attempts++;
        throw new Error('no');
      }));
    });
    const t = await kit({ workflows: [wf] });
    const { runId } = await t.engine.trigger('defaults', null);
    await t.advance('10s');
    expect((await t.engine.runs.get(runId)).status).toBe('failed');
    expect(attempts).toBe(2);
  });
});

describe('recovery at start-up', () => {
  it('a waiting run whose signal was stored just before a crash resumes on restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-kit-'));
    const wf = workflow('waits', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('go'));
    });
    try {
      const a = await createTestEngine({ workflows: [wf], dataDir });
      const { runId } = await a.engine.trigger('waits', null);
      await a.idle();
      await a.close();
      // The crash window: the signal row is durable but no engine dispatched the run.
      const Database = (await import('better-sqlite3')).default;
      const db = new Database(join(dataDir, 'tranquil.db'));
      db.prepare(`INSERT INTO signals (run_id, name, payload, created_at) VALUES (?, 'go', '"yes"', 0)`).run(runId);
      db.close();
      const b = await createTestEngine({ workflows: [wf], dataDir });
      await b.idle();
      expect((await b.engine.runs.get(runId)).output).toBe('yes');
      await b.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
