// A run as a portable file (issue 13, docs/data.md): exported from one data dir (while its
// engine is stopped or running), imported into a fresh one, where it resumes and finishes
// without re-running its recorded steps; the file is owner-only, checked on import (one-line
// error naming the field, nothing stored), and an existing run id is never overwritten.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createTestEngine } from '@tranquil/engine/testing';
import { resolveConfig } from '../../compose/config.ts';
import { exportRunFile, importRunFile } from '../../compose/run-file.ts';
import { scratch } from './scratch.ts';

const { open, newDir } = scratch('runfile');

const calls = { a: 0, b: 0 };
const mover = workflow('mover', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step }) => {
    const a = await step.do('a', () => (calls.a++, { from: (input as { who: string }).who }));
    await step.sleep('nap', '1h');
    const go = await step.waitForEvent<{ n: number }>('go');
    const b = await step.do('b', () => (calls.b++, go.n * 2));
    return { a, b };
  });
});

it('an exported run resumes in a fresh data dir and finishes; the file is owner-only and checked; no overwrite', async () => {
  const src = newDir();
  const t = await createTestEngine({ workflows: [mover], dataDir: src });
  open.push(t);
  const { runId } = await t.engine.trigger('mover', { who: 'ana' });
  await t.advance('1h');
  expect((await t.engine.runs.get(runId)).status).toBe('waiting');
  await t.close();
  open.length = 0;
  const path = join(newDir(), 'run.tqrun');
  const exported = exportRunFile(resolveConfig({ dataDir: src, backend: 'sqlite' }), runId, path);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(exported.run.input).toEqual({ who: 'ana' });
  expect(exported.run.status).toBe('waiting');
  expect(exported.journal.map((e) => `${e.kind}:${e.name}:${e.status}`)).toEqual(['do:a:succeeded', 'sleep:nap:succeeded', 'wait:go:waiting']);
  expect(calls.a).toBe(1);

  const dst = newDir();
  await importRunFile(resolveConfig({ dataDir: dst, backend: 'sqlite' }), path);
  const u = await createTestEngine({ workflows: [mover], dataDir: dst, startAt: t.now() });
  open.push(u);
  expect((await u.engine.runs.get(runId)).status).toBe('waiting');
  await u.engine.signal(runId, 'go', { n: 21 });
  const view = await u.engine.result(runId, { timeout: '10s' });
  expect(view.status).toBe('succeeded');
  expect(view.output).toEqual({ a: { from: 'ana' }, b: 42 });
  expect(calls).toEqual({ a: 1, b: 1 }); // 'a' replayed from the imported journal
  await u.close();
  open.length = 0;

  await expect(importRunFile(resolveConfig({ dataDir: dst, backend: 'sqlite' }), path)).rejects.toThrow(`run ${runId} already exists in this data dir; nothing imported`);
  const bad = JSON.parse(readFileSync(path, 'utf8')) as { run: { status: string } };
  bad.run.status = 'teleported';
  const badPath = join(dst, 'bad.tqrun');
  writeFileSync(badPath, JSON.stringify(bad));
  const other = newDir();
  const err = await importRunFile(resolveConfig({ dataDir: other, backend: 'sqlite' }), badPath).catch((e: Error) => e);
  expect(String((err as Error).message)).toMatch(/run\.status/);
  expect(String((err as Error).message)).not.toContain('\n');
  expect(existsSync(join(other, 'tranquil.db'))).toBe(false); // refused before the data dir was opened
});

it("a retrying step's limit and a cancelled run's asker travel with the file", async () => {
  const flaky = workflow('flaky', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.do('call', { retries: { limit: 6, delay: '1h' } }, () => {
      throw new Error('remote 503');
    }));
  });
  const src = newDir();
  const t = await createTestEngine({ workflows: [flaky], dataDir: src });
  open.push(t);
  const retrying = (await t.engine.trigger('flaky', null)).runId;
  const cancelled = (await t.engine.trigger('flaky', null)).runId;
  await t.idle();
  await t.engine.runs.cancel(cancelled, { by: 'ops (pager)' });
  const before = { r: await t.engine.runs.get(retrying), c: await t.engine.result(cancelled, { timeout: '10s' }) };
  expect(before.r.steps[0]).toMatchObject({ status: 'retrying', retryLimit: 6 });
  expect(before.c.cancel?.by).toBe('ops (pager)');
  await t.close();
  open.length = 0;

  const dst = newDir();
  for (const id of [retrying, cancelled]) {
    const path = join(newDir(), `${id}.tqrun`);
    exportRunFile(resolveConfig({ dataDir: src, backend: 'sqlite' }), id, path);
    await importRunFile(resolveConfig({ dataDir: dst, backend: 'sqlite' }), path);
  }
  const u = await createTestEngine({ workflows: [flaky], dataDir: dst, startAt: t.now() });
  open.push(u);
  expect((await u.engine.runs.get(retrying)).steps[0]?.retryLimit).toBe(6);
  expect((await u.engine.runs.get(cancelled)).cancel).toEqual(before.c.cancel);
  expect((await u.engine.runs.explain(cancelled)).summary).toContain(`was cancelled by ops (pager) at ${before.c.cancel!.at}`);
});
