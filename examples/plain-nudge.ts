// `npx tsx examples/plain-nudge.ts`: the plain-data activation nudge (activation_nudge.yaml,
// docs/plain-workflows.md) under the testing kit, so its 48h wait passes at once: one user
// who activated (skipped), one who did not (nudged; the mail server fails once first).
import { readFileSync } from 'node:fs';
import { createTestEngine } from '@tranquil/engine/testing';
import { plainWorkflow, TerminalError, type Actions } from '@tranquil/engine';

const users: Record<string, { activated: boolean; email: string }> = {
  ada: { activated: true, email: 'ada@example.com' },
  bob: { activated: false, email: 'bob@example.com' },
};
let mailFailures = 1;
const actions: Actions = {
  'app.load_user': (input) => {
    const { id } = input as { id: string };
    if (!users[id]) throw new TerminalError(`no user ${id}`);
    return users[id];
  },
  'mail.send_template': (input, { key, attempt }) => {
    const { to, template } = input as { to: string; template: string };
    console.log(`  mail.send_template to=${to} template=${template} key=${key} attempt=${attempt}`);
    if (mailFailures-- > 0) throw Object.assign(new Error('mail server: 503'), { status: 503 });
    return { sent: true };
  },
};

const file = new URL('./activation_nudge.yaml', import.meta.url);
const t = await createTestEngine({ workflows: [plainWorkflow(readFileSync(file, 'utf8'), { source: 'activation_nudge.yaml' })], actions });
const runs = [];
for (const user_id of Object.keys(users)) runs.push(...(await t.engine.emit('user.signed_up', { user_id })).runIds);
await t.advance('48h');
await t.advance('10m'); // the retry's backoff
for (const runId of runs) {
  const run = await t.engine.result(runId);
  console.log(`${runId}: ${run.status} ${JSON.stringify(run.output)}\n  why: ${(await t.engine.runs.explain(runId)).summary}`);
}
await t.close();
