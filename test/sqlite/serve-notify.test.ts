// serve's failure hooks (cli/serve-notify.ts) on a real engine: a failed run POSTs its event
// JSON to a loopback listener and runs the shell command with the event on stdin and in env.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import { createEngine } from '@tranquil/engine';
import { onFailure, parseLoopbackUrl } from '../../cli/serve-notify.ts';

it('a run failure is POSTed to the loopback URL and handed to the command, once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-serve-notify-'));
  const posted: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => (posted.push(body), res.end('ok')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = parseLoopbackUrl(`http://127.0.0.1:${(server.address() as { port: number }).port}/failed`);
  expect(() => parseLoopbackUrl('http://10.0.0.1/x')).toThrow(/only http:\/\/127\.0\.0\.1, localhost or \[::1\] URLs/);
  const out = join(dir, 'hook.out');
  const wf = workflow('pays', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => step.do('charge', () => {
      throw new TerminalError('card declined');
    }));
  });
  const engine = await createEngine({ dataDir: dir, workflows: [wf] });
  try {
    await engine.start();
    onFailure(engine, { exec: `{ cat; echo; echo "$TRANQUIL_RUN_ID $TRANQUIL_WORKFLOW $TRANQUIL_ERROR"; } >> '${out}'`, post: url });
    const { runId } = await engine.trigger('pays', null);
    await engine.result(runId, { timeout: '10s' });
    for (let i = 0; i < 400 && !(posted.length && existsSync(out) && readFileSync(out, 'utf8').includes(runId)); i++) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 600)); // more notifier ticks: nothing twice
    expect(posted.map((p) => JSON.parse(p))).toEqual([
      { type: 'run.failed', runId, workflow: 'pays', status: 'failed', at: (await engine.runs.get(runId)).updatedAt, error: { name: 'TerminalError', message: 'card declined' }, step: 'charge', attempt: 1 },
    ]);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toEqual(JSON.parse(posted[0]!));
    expect(lines[1]).toBe(`${runId} pays TerminalError: card declined`);
  } finally {
    await engine.stop();
    server.close();
    server.closeAllConnections();
    rmSync(dir, { recursive: true, force: true });
  }
});
