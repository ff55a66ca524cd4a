// `npm start`: runs the engine on the embedded SQLite default (./.tranquil) and shows one
// activation-nudge run progressing: sleeping -> retrying -> succeeded, then explains it.
export {};
process.env.NUDGE_PAUSE ??= '2s';
const { createEngine } = await import('@tranquil/engine');
const { default: activationNudge } = await import('./activation-nudge.ts');

const engine = await createEngine({ dataDir: process.env.TRANQUIL_DATA_DIR ?? '.tranquil', workflows: [activationNudge] });
await engine.start();
console.log(`tranquil: engine started on backend '${engine.backend}', data in ${process.env.TRANQUIL_DATA_DIR ?? '.tranquil'}`);

const userId = `u${Date.now()}`;
const { runIds } = await engine.emit('user.signed_up', { userId }, { id: `signup-${userId}` });
const runId = runIds[0]!;
console.log(`event user.signed_up -> run ${runId}`);

let last = '';
const show = setInterval(async () => {
  const view = await engine.runs.get(runId);
  const line = `${view.status.padEnd(9)} ${view.steps.map((s) => `${s.name}:${s.status}${s.attempts > 1 ? `(x${s.attempts})` : ''}`).join(' ')}`;
  if (line !== last) console.log(`  ${line}`);
  last = line;
}, 50);

const view = await engine.result(runId, { timeout: '60s' });
clearInterval(show);
console.log(`result: ${view.status} ${JSON.stringify(view.output)}`);
console.log(`why: ${(await engine.runs.explain(runId)).summary}`);
await engine.stop();
