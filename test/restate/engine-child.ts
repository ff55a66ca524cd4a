// Child process for the Restate restart test: an engine on the Restate backend over
// DATA_DIR. Starts run `r1` (deduplicated on later starts), logs each step attempt to LOG,
// prints READY, and with WAIT=1 waits for r1's result, prints DONE <status>, stops cleanly.
import { appendFileSync } from 'node:fs';
import { createEngine } from '../../compose/index.ts';
import { manual, workflow } from '../../sdk/index.ts';

const log = process.env.LOG!;
const wf = workflow('long-haul', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    const a = await step.do('a', ({ idempotencyKey, attempt }) => (appendFileSync(log, `a ${idempotencyKey} ${attempt}\n`), 'A'));
    await step.sleep('nap', 1500);
    const b = await step.do('b', async ({ idempotencyKey, attempt }) => {
      appendFileSync(log, `b ${idempotencyKey} ${attempt}\n`);
      await new Promise((r) => setTimeout(r, 300));
      return 'B';
    });
    return { a, b, at: ctx.now() };
  });
});

const engine = await createEngine({ backend: 'restate', dataDir: process.env.DATA_DIR!, workflows: [wf] });
await engine.start();
await engine.trigger('long-haul', null, { runId: 'r1' });
process.stdout.write('READY\n');
if (process.env.WAIT !== '1') {
  // Tells the test when step a's result is journaled: the run reached its sleep after it.
  while ((await engine.runs.get('r1')).status !== 'sleeping') await new Promise((r) => setTimeout(r, 20));
  process.stdout.write('SLEEPING\n');
}
if (process.env.WAIT === '1') {
  const view = await engine.result('r1', { timeout: '60s' });
  process.stdout.write(`DONE ${view.status} ${JSON.stringify(view.output)}\n`);
  await engine.stop();
  process.exit(0);
}
