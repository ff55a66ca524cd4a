// The control channel's stream answers (src/adapters/http/stream-batch.ts) on a real engine:
// a reader far behind gets the chunks in answers of at most MAX_BATCH_CHUNKS, in order, each
// saying where to ask from next, with `done` only on the answer that hands out the last chunk
// of a closed stream; a live stream with nothing new waits and answers the next chunk written,
// or answers nothing at waitMs and leaves nothing reading the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { manual, workflow } from '@tranquil/sdk';
import { MAX_BATCH_CHUNKS, streamBatch } from '../../src/adapters/http/stream-batch.ts';

const COUNT = MAX_BATCH_CHUNKS + 200;
const many = workflow('many-chunks', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const out = ctx.stream('rows');
    for (let i = 0; i < COUNT; i++) await out.write(i);
    await step.waitForEvent('last');
    await out.write('last');
    await out.close();
  });
});

let engine: Engine | undefined;
let dir: string | undefined;
afterEach(async () => {
  await engine?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('answers a stream in bounded batches, in order, done only with the last chunk; a live reader waits for the next one', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tranquil-stream-batch-'));
  engine = await createEngine({ dataDir: dir, workflows: [many] });
  await engine.start();
  const { runId } = await engine.trigger('many-chunks', null);
  for (let i = 0; (await engine.runs.get(runId)).status !== 'waiting'; i++) {
    if (i > 3000) throw new Error('the run never reached its wait');
    await new Promise((r) => setTimeout(r, 20));
  }
  const first = await streamBatch(engine, runId, 'rows', 0, 0);
  expect(first.chunks).toEqual(Array.from({ length: MAX_BATCH_CHUNKS }, (_, i) => i));
  expect(first).toMatchObject({ next: MAX_BATCH_CHUNKS, done: false });
  const second = await streamBatch(engine, runId, 'rows', first.next, 0);
  expect(second.chunks).toEqual(Array.from({ length: 200 }, (_, i) => MAX_BATCH_CHUNKS + i));
  expect(second).toMatchObject({ next: COUNT, done: false });
  // Nothing new within waitMs: an empty answer, and nothing goes on reading the run after it
  // (a follower asks every 25 s; a reader left behind by each answer would pile up).
  const runs = engine.runs as { get: typeof engine.runs.get };
  const get = runs.get;
  let reads = 0;
  runs.get = (id) => (reads++, get(id));
  expect(await streamBatch(engine, runId, 'rows', COUNT, 100)).toEqual({ chunks: [], next: COUNT, done: false });
  const readsAtAnswer = reads;
  expect(readsAtAnswer).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 600));
  expect(reads).toBe(readsAtAnswer);
  runs.get = get;
  // Nothing new: the answer waits for the next chunk (here the one the signal lets the run write).
  const waiting = streamBatch(engine, runId, 'rows', COUNT, 20_000);
  setTimeout(() => void engine!.signal(runId, 'last', null), 50);
  const third = await waiting;
  expect(third.chunks).toEqual(['last']);
  expect(third.next).toBe(COUNT + 1);
  const end = await streamBatch(engine, runId, 'rows', third.next, 20_000);
  expect(end).toEqual({ chunks: [], next: COUNT + 1, done: true });
}, 120_000);
