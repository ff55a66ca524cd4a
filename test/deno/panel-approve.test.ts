// The Runs panel's Approve action (src/adapters/http/panel.ts) on a real Deno child: a run of
// an unapproved workflow file shows its verdict and the Approve button; the POST (token, own
// origin, the declaration hash the page showed) approves it and the run goes on. A stale hash
// (the file changed after the page was shown) is refused and approves nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createEngine, createPanel } from '../../compose/index.ts';

it('approve from the run page releases the blocked run; a stale declaration hash is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-panel-approve-'));
  const file = join(dir, 'flow.ts');
  writeFileSync(file, `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('panel-approval', { permissions: { env: ['TRANQUIL_TEST_A'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.do('only', () => 'ran'));
});
`);
  const engine = await createEngine({ dataDir: join(dir, 'data'), workflowFiles: [file], log: { level: 'silent' } });
  await engine.start();
  try {
    const { runId } = await engine.trigger('panel-approval');
    const panel = await createPanel(engine);
    const own = 'http://127.0.0.1:9';
    const html = await (await panel.app.request(`${own}/runs/${runId}`)).text();
    expect(html).toContain('is blocked until its permission declaration is approved');
    expect(html).toContain('id="approve"');
    const hash = /name="hash" value="([0-9a-f]{16})"/.exec(html)?.[1];
    expect(hash).toBeDefined();
    const approve = (h: string) => panel.app.request(`${own}/workflows/panel-approval/approve`, {
      method: 'POST', headers: { origin: own, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _token: panel.token, run: runId, hash: h }).toString(),
    });
    const stale = await approve('0000000000000000');
    expect(decodeURIComponent(stale.headers.get('location')!)).toMatch(/the declaration on disk is [0-9a-f]{16}, not 0000000000000000 .*nothing approved/);
    expect((await engine.runs.get(runId)).status).toBe('blocked');
    const ok = await approve(hash!);
    expect(ok.status).toBe(303);
    expect(decodeURIComponent(ok.headers.get('location')!)).toContain(`approved declaration ${hash}; released 1 run(s)`);
    expect((await engine.result(runId, { timeout: '60s' })).output).toBe('ran');
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
