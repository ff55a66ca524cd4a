// Child process of the SIGKILL storm (sigkill-storm.test.ts): an engine on DATA_DIR that
// starts RUNS new runs per generation, re-delivers the previous generation's run ids and
// event id (which must start nothing new), logs every step attempt to LOG with a
// synchronous append (survives SIGKILL: the page cache keeps it), and exits by itself only
// when every run is terminal (ALL_DONE). The parent kills it at random moments, during
// start-up and recovery as well as with runs in flight.
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createEngine } from '../../compose/index.ts';
import { event, manual, workflow } from '../../sdk/index.ts';

const dataDir = process.env.DATA_DIR!;
const log = process.env.LOG!;
const runs = Number(process.env.RUNS ?? 4);
const gen = Number(process.env.GEN ?? 0);
const finish = process.env.FINISH === '1';

const note = (line: Record<string, unknown>) => appendFileSync(log, JSON.stringify(line) + '\n');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const body = (runId: string, step: string) => async ({ idempotencyKey, attempt }: { idempotencyKey: string; attempt: number }) => {
  const result = randomUUID();
  note({ runId, step, key: idempotencyKey, attempt, result });
  await pause(Math.random() * 8);
  if (step === 'b' && attempt === 1) throw new Error('the first attempt of b fails');
  return result;
};

const storm = workflow('storm', (w) => {
  w.trigger(manual());
  w.trigger(event('storm.kick'));
  w.run(async ({ step, ctx }) => {
    const retries = { retries: { limit: 4, delay: 5, backoff: 'constant' as const, jitter: false } };
    const a = await step.do('a', retries, body(ctx.runId, 'a'));
    await step.sleep('nap', 10);
    const b = await step.do('b', retries, body(ctx.runId, 'b'));
    await ctx.emit('storm.done', { runId: ctx.runId });
    const c = await step.do('c', retries, body(ctx.runId, 'c'));
    return { a, b, c };
  });
});

const engine = await createEngine({ dataDir, workflows: [storm], maxConcurrentRuns: 50 });
await engine.start();
if (!finish) {
  for (let i = 0; i < runs; i++) {
    // Re-delivery of the previous generation's id: the first run, never a second one.
    if (gen > 0) await engine.trigger('storm', { i }, { runId: `g${gen - 1}-${i}` });
    const r = await engine.trigger('storm', { i }, { runId: `g${gen}-${i}` });
    note({ acked: 'run', runId: r.runId, created: r.created });
  }
  for (const id of gen > 0 ? [`kick-${gen - 1}`, `kick-${gen}`] : [`kick-${gen}`]) {
    const e = await engine.emit('storm.kick', { id }, { id });
    note({ acked: 'event', id, runIds: e.runIds, duplicate: e.duplicate });
  }
  process.stdout.write('READY\n');
}
const poll = setInterval(async () => {
  const open = (await engine.runs.list({ limit: 10_000 })).filter((r) => !['succeeded', 'failed', 'cancelled'].includes(r.status));
  if (open.length === 0 && finish) {
    clearInterval(poll);
    await engine.stop();
    process.stdout.write('ALL_DONE\n');
    process.exit(0);
  }
}, 15);
