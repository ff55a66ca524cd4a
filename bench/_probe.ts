import { createEngine } from '../compose/index.ts';
import { workflow, manual } from '../sdk/index.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const payload = { ok: true, v: 'x'.repeat(170), n: 12345 };
const wf = workflow('ten', (w) => { w.trigger(manual()); w.run(async ({ step }) => { for (let i = 0; i < 10; i++) await step.do('s' + i, () => payload); return 1; }); });
for (const durability of ['full', 'normal'] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'tq-'));
  const t0 = performance.now();
  const e = await createEngine({ dataDir: dir, workflows: [wf], durability, maxConcurrentRuns: 1000 });
  await e.start();
  const { runId } = await e.trigger('ten', {}); await e.result(runId, { timeout: '60s' });
  console.log('first run ms', performance.now() - t0);
  for (const conc of [1, 100]) {
    const N = conc === 1 ? 200 : 2000;
    const t1 = performance.now();
    if (conc === 1) { for (let i = 0; i < N; i++) { const { runId } = await e.trigger('ten', {}); await e.result(runId, { timeout: '60s' }); } }
    else {
      let next = 0; const worker = async () => { while (next < N) { next++; const { runId } = await e.trigger('ten', {}); await e.result(runId, { timeout: '60s' }); } };
      await Promise.all(Array.from({ length: conc }, worker));
    }
    const s = (performance.now() - t1) / 1000;
    console.log(durability, conc, 'steps/s', (N * 10 / s).toFixed(0), 'runs', N, 's', s.toFixed(2), (e as any).executor.commitStats);
  }
  await e.stop(); rmSync(dir, { recursive: true, force: true });
}
