// Child process for the crash test: runs the engine on DATA_DIR, starts RUNS runs (caller
// ids, so a restart re-triggering them is deduplicated) and appends one line per step
// attempt to LOG. Killed with SIGKILL at random moments by the parent test.
import { appendFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createEngine } from '../../compose/index.ts';
import { manual, workflow } from '../../sdk/index.ts';

const dataDir = process.env.DATA_DIR!;
const log = process.env.LOG!;
const runs = Number(process.env.RUNS ?? 20);
const gen = Number(process.env.GEN ?? 0);

const attempt = (runId: string, step: string, key: string, n: number, result: string) =>
  appendFileSync(log, JSON.stringify({ runId, step, key, attempt: n, result }) + '\n');

const wf = workflow('crashy', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const seen: Record<string, unknown> = {};
    for (const name of ['a', 'b', 'c']) {
      seen[name] = await step.do(name, { retries: { limit: 5, delay: 15, backoff: 'constant', jitter: false } }, async ({ idempotencyKey, attempt: n }) => {
        const result = randomUUID();
        attempt(ctx.runId, name, idempotencyKey, n, result);
        await new Promise((r) => setTimeout(r, Math.random() * 25));
        if (name === 'b' && n === 1) throw new Error('first attempt of b always fails');
        return result;
      });
      if (name === 'a') await step.sleep('nap', 30);
    }
    seen.now = ctx.now();
    return seen;
  });
});

const backend = process.env.BACKEND === 'restate' ? 'restate' : 'sqlite';
const engine = await createEngine({ backend, dataDir, workflows: [wf], maxConcurrentRuns: 50 });
await engine.start();
// Every generation adds new runs, so runs are in flight at every kill; re-triggering the
// previous generation's ids must start nothing new (unless that child died before READY,
// PREV_READY=0, when it may never have started them).
for (let i = 0; i < runs; i++) {
  if (gen > 0) {
    const again = await engine.trigger('crashy', { i }, { runId: `g${gen - 1}-${i}` });
    if (again.created && process.env.PREV_READY !== '0') throw new Error(`run g${gen - 1}-${i} was created twice`);
  }
  await engine.trigger('crashy', { i }, { runId: `g${gen}-${i}` });
}
process.stdout.write('READY\n');
const poll = setInterval(async () => {
  const open = (await engine.runs.list({ limit: 10_000 })).filter((r) => !['succeeded', 'failed', 'cancelled'].includes(r.status));
  if (open.length === 0) {
    clearInterval(poll);
    // VIEWS: every run's full view, for checks that cannot read a SQLite file (Restate).
    if (process.env.VIEWS) {
      const all = await engine.runs.list({ limit: 10_000 });
      writeFileSync(process.env.VIEWS, JSON.stringify(await Promise.all(all.map((r) => engine.runs.get(r.runId)))));
    }
    await engine.stop();
    process.stdout.write('ALL_DONE\n');
    process.exit(0);
  }
}, backend === 'restate' ? 300 : 20); // the Restate view is an admin SQL query: poll gently
